/** Exports: files of the merchant's objects for its accountants (extensions 13). */
import type { Readable } from 'node:stream';
import type { Schemas } from '../schemas.js';
import { seg, writeOpts, isoTime, type ResourceHost, type WriteOptions } from './shared.js';

export type Export = Schemas['Export'];
export type ExportRequest = Schemas['ExportRequest'];
export type ExportKind =
  | 'deposits'
  | 'withdrawals'
  | 'remittances'
  | 'exchange_orders'
  | 'earn_orders'
  | 'qrpay_payments'
  | 'card_transactions'
  | 'ledger_entries'
  | 'member_balances';

export interface CreateExportBody {
  kind: ExportKind;
  /** ISO 8601 with a time zone, or a Date: created at or after. */
  created_gte: string | Date;
  /** ISO 8601 with a time zone, or a Date: created strictly before (`member_balances`: the balances as of it). */
  created_lt: string | Date;
  format?: 'csv' | 'jsonl';
}

export interface ExportFile {
  /** `text/csv; charset=utf-8` or `application/x-ndjson; charset=utf-8`. */
  contentType: string;
  /** The file's bytes as they arrive (read it as a stream: files can be large). */
  body: Readable;
}

export interface ExportsResource {
  /** POST /v1/exports (idempotent; `exports:write`): written in the background. */
  create(body: CreateExportBody, opts?: WriteOptions): Promise<ExportRequest>;
  /** GET /v1/exports, every page, newest first. */
  list(opts?: { limit?: number }): AsyncIterable<Export>;
  /** GET /v1/exports/{id} (`exp_` prefix optional). */
  get(id: string): Promise<Export>;
  /** GET /v1/exports/{id}/file, streamed; `not_found` while pending, when failed, and after 7 days. */
  download(id: string, opts?: { idleTimeoutMs?: number }): Promise<ExportFile>;
}

export function createExportsResource(host: ResourceHost): ExportsResource {
  return {
    create: (body, opts) =>
      host.request<ExportRequest>({
        method: 'POST',
        path: '/v1/exports',
        body: { ...body, created_gte: isoTime(body.created_gte), created_lt: isoTime(body.created_lt) },
        ...writeOpts(opts),
      }),
    list: (opts) => host.paginate<Export>('/v1/exports', { limit: opts?.limit }),
    get: (id) => host.request<Export>({ method: 'GET', path: `/v1/exports/${seg(id)}` }),
    download: async (id, opts) => {
      const res = await host.openStream({
        path: `/v1/exports/${seg(id)}/file`,
        headers: { accept: 'text/csv, application/x-ndjson' },
        ...(opts?.idleTimeoutMs ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
      });
      const type = res.headers['content-type'];
      return { contentType: Array.isArray(type) ? (type[0] ?? '') : (type ?? ''), body: res.body };
    },
  };
}
