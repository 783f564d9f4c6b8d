import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { EventRow } from '../../events/queries.js';
import { scopeNowSql } from '../../platform/clock.js';

/**
 * The posting statement of many entries (money/post-many.ts): the database function
 * `mwa_post_entries_across`, and each posted entry's event inserted in the same statement.
 */

/**
 * Each entry's answer: `ok`, `duplicate`, `short` with the (1-based) account that would fall below zero, or
 * `skipped` (the entry it requires did not post).
 */
export type PostedEntry = { entry_index: number; status: string; account_index: number | null };

/** The statement's arguments, as column arrays; entries and accounts are referred to by 1-based index. */
export interface PostEntriesArgs {
  accounts: {
    environments: string[];
    assets: string[];
    ownerTypes: string[];
    ownerIds: string[];
    buckets: string[];
    normalSides: string[];
    nonNegative: boolean[];
  };
  entries: {
    environments: string[];
    merchantIds: string[];
    ids: string[];
    kinds: string[];
    referenceTypes: string[];
    referenceIds: string[];
    assets: string[];
  };
  /** Each account's balance change in an entry (decimal strings). */
  deltas: { entries: number[]; accounts: number[]; amounts: string[] };
  /** Each line's account and signed amount (debit positive, decimal strings). */
  lines: { entries: number[]; accounts: number[]; amounts: string[] };
  /** The events to record, each with its entry: written only when that entry posts. */
  events: { entries: number[]; rows: EventRow[] };
  /** Each entry's requirement: the entry that must post before it may (null: none); undefined when no entry has one. */
  requires?: (number | null)[];
}

export async function callPostEntries(trx: Transaction<Database>, a: PostEntriesArgs): Promise<PostedEntry[]> {
  const { accounts, entries, deltas, lines } = a;
  const events = a.events;
  const ev = a.events.rows;
  const { rows } = await sql<PostedEntry>`
      WITH posted AS MATERIALIZED (
        SELECT * FROM mwa_post_entries_across(
          ${accounts.environments}::text[], ${accounts.assets}::text[],
            ${accounts.ownerTypes}::text[], ${accounts.ownerIds}::text[],
          ${accounts.buckets}::text[], ${accounts.normalSides}::text[],
            ${accounts.nonNegative}::boolean[],
          ${entries.environments}::text[], ${entries.merchantIds}::text[],
          ${entries.ids}::text[], ${entries.kinds}::text[],
            ${entries.referenceTypes}::text[],
          ${entries.referenceIds}::text[], ${entries.assets}::text[],
          ${deltas.entries}::int[], ${deltas.accounts}::int[],
            ${deltas.amounts}::numeric[],
          ${lines.entries}::int[], ${lines.accounts}::int[],
            ${lines.amounts}::numeric[], ${a.requires ?? null}::int[])
      ),
      recorded AS (
        INSERT INTO events (id, merchant_id, environment, type, object, object_id, external_member_id, status,
          status_version, livemode, created_at)
        SELECT e.id, e.merchant_id, e.environment, e.type, e.object, e.object_id, e.external_member_id, e.status,
          e.status_version, e.livemode,
               ${scopeNowSql(sql.ref('e.merchant_id'), sql.ref('e.environment'))}
        FROM unnest(${events.entries}::int[], ${ev.map((e) => e.id)}::text[],
          ${ev.map((e) => e.merchant_id)}::text[],
                    ${ev.map((e) => e.environment)}::text[], ${ev.map((e) => e.type)}::text[],
                      ${ev.map((e) => e.object)}::text[],
                    ${ev.map((e) => e.object_id)}::text[], ${ev.map((e) => e.external_member_id)}::text[],
                      ${ev.map((e) => e.status)}::text[],
                    ${ev.map((e) => e.status_version)}::int[], ${ev.map((e) => e.livemode)}::boolean[])
             WITH ORDINALITY AS e(entry, id, merchant_id, environment, type, object, object_id, external_member_id,
               status, status_version, livemode, ord)
        JOIN posted p ON p.entry_index = e.entry AND p.status = 'ok'
        ORDER BY e.ord
      )
      SELECT entry_index, status, account_index FROM posted
    `.execute(trx);
  return rows;
}
