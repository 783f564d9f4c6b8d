/** The merchant's journal: its ledger entries (extensions 13). */
import type { Schemas } from '../schemas.js';
import { seg, isoTime, type ResourceHost } from './shared.js';

export type LedgerEntry = Schemas['LedgerEntry'];

/** Filters of `GET /v1/ledger/entries`; they combine. */
export interface LedgerEntryFilters {
  /** `mem_<uuid>` or the external member id: entries that moved one of the member's balances. */
  member_id?: string;
  asset?: string;
  /** The object the entry moved money for (`dep_…`, `wdr_…`, …). */
  reference_id?: string;
  /** ISO 8601 with a time zone, or a Date: created at or after. */
  created_gte?: string | Date;
  /** ISO 8601 with a time zone, or a Date: created strictly before. */
  created_lt?: string | Date;
}

export interface LedgerResource {
  /** GET /v1/ledger/entries, every page, newest first (`ledger:read`). */
  entries(opts?: LedgerEntryFilters & { limit?: number }): AsyncIterable<LedgerEntry>;
  /** GET /v1/ledger/entries/{id} (`jre_` prefix optional). */
  entry(id: string): Promise<LedgerEntry>;
}

export function createLedgerResource(host: ResourceHost): LedgerResource {
  return {
    entries: (opts) =>
      host.paginate<LedgerEntry>('/v1/ledger/entries', {
        query: {
          member_id: opts?.member_id,
          asset: opts?.asset,
          reference_id: opts?.reference_id,
          created_gte: isoTime(opts?.created_gte),
          created_lt: isoTime(opts?.created_lt),
        },
        limit: opts?.limit,
      }),
    entry: (id) => host.request<LedgerEntry>({ method: 'GET', path: `/v1/ledger/entries/${seg(id)}` }),
  };
}
