import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import { scopeNowSql } from '../platform/clock.js';
import { accountKey, type AccountRef, type AccountSpec } from './accounts.js';
import { DuplicatePostingError, InsufficientFundsError } from './errors.js';
import { eventRow, type EventInput } from '../events/outbox.js';
import { assertEntry, sqlState, type EntryInput, type EntryLine } from './posting.js';

/** One movement of `postEntries`: its entry, and the event that reports it (recorded only if the entry posts). */
export interface EntryWithEvent {
  entry: EntryInput;
  event?: EventInput;
}

/** What each entry of `postEntries` became: posted (with its event's id), or refused with nothing of it written. */
export type PostOutcome = { entryId: string; eventId?: string } | InsufficientFundsError | DuplicatePostingError;

const signed = (line: EntryLine): bigint => (line.side === 'debit' ? line.amount : -line.amount);

interface Account {
  ref: AccountRef;
  spec: AccountSpec;
  asset: string;
  key: string;
}

/**
 * `postEntry` for many entries in one statement, whatever their merchants and environments (group
 * commit, docs/group-commit.md): the database function `mwa_post_entries_across` (migration 051,
 * after `mwa_post_entries` of 032) gives each
 * entry the answer `postEntry` would have given it, called once per entry in this order in the
 * caller's transaction, and a refusal (a shortfall, a repeat) writes nothing of its entry and
 * does not stop the others. Each entry's event is written in the same statement, only when the
 * entry posted. The same checks as `postEntry` run first (`assertEntry`: a programmer error
 * throws before anything is written).
 */
export async function postEntries(
  trx: Transaction<Database>,
  items: readonly EntryWithEvent[],
): Promise<PostOutcome[]> {
  if (items.length === 0) return [];
  const accounts = new Map<string, Account & { environment: string }>();
  const deltas: { entry: number; account: string; delta: bigint }[] = [];
  const lines: { entry: number; account: string; amount: bigint }[] = [];
  for (const [i, { entry }] of items.entries()) {
    for (const [key, change] of assertEntry(entry)) {
      const id = `${entry.environment}\u0000${entry.asset}\u0000${key}`;
      if (!accounts.has(id))
        accounts.set(id, {
          ref: change.ref,
          spec: change.spec,
          asset: entry.asset,
          key: id,
          environment: entry.environment,
        });
      deltas.push({ entry: i + 1, account: id, delta: change.delta });
    }
    for (const line of entry.lines) {
      lines.push({
        entry: i + 1,
        account: `${entry.environment}\u0000${entry.asset}\u0000${accountKey(line.account)}`,
        amount: signed(line),
      });
    }
  }
  // Created in (environment, asset, key) order, as `postEntry` creates one entry's accounts in key order.
  const ordered = [...accounts.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const indexOf = new Map(ordered.map((a, i) => [a.key, i + 1]));
  const entryIds = items.map(() => newId('jrn'));
  const events = items.flatMap(({ event }, i) => (event ? [{ entry: i + 1, row: eventRow(event) }] : []));
  const ev = events.map((e) => e.row);
  let rows: { entry_index: number; status: string; account_index: number | null }[];
  try {
    ({ rows } = await sql<{ entry_index: number; status: string; account_index: number | null }>`
      WITH posted AS MATERIALIZED (
        SELECT * FROM mwa_post_entries_across(
          ${ordered.map((a) => a.environment)}::text[], ${ordered.map((a) => a.asset)}::text[],
            ${ordered.map((a) => a.spec.ownerType)}::text[], ${ordered.map((a) => a.spec.ownerId)}::text[],
          ${ordered.map((a) => a.spec.bucket)}::text[], ${ordered.map((a) => a.spec.normalSide)}::text[],
            ${ordered.map((a) => a.spec.nonNegative)}::boolean[],
          ${items.map((x) => x.entry.environment)}::text[], ${items.map((x) => x.entry.merchantId)}::text[],
          ${entryIds}::text[], ${items.map((x) => x.entry.kind)}::text[],
            ${items.map((x) => x.entry.referenceType)}::text[],
          ${items.map((x) => x.entry.referenceId)}::text[], ${items.map((x) => x.entry.asset)}::text[],
          ${deltas.map((d) => d.entry)}::int[], ${deltas.map((d) => indexOf.get(d.account)!)}::int[],
            ${deltas.map((d) => d.delta.toString())}::numeric[],
          ${lines.map((l) => l.entry)}::int[], ${lines.map((l) => indexOf.get(l.account)!)}::int[],
            ${lines.map((l) => l.amount.toString())}::numeric[])
      ),
      recorded AS (
        INSERT INTO events (id, merchant_id, environment, type, object, object_id, external_member_id, status,
          status_version, livemode, created_at)
        SELECT e.id, e.merchant_id, e.environment, e.type, e.object, e.object_id, e.external_member_id, e.status,
          e.status_version, e.livemode,
               ${scopeNowSql(sql.ref('e.merchant_id'), sql.ref('e.environment'))}
        FROM unnest(${events.map((e) => e.entry)}::int[], ${ev.map((e) => e.id)}::text[],
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
    `.execute(trx));
  } catch (err) {
    // The CHECK constraint is the backstop of the function's own check: no entry can be told apart here.
    if (sqlState(err) === '23514')
      throw new Error(`ledger: a balance check failed in a posting of ${items.length} entries`, { cause: err });
    throw err;
  }
  const byEntry = new Map(rows.map((r) => [Number(r.entry_index), r]));
  const eventIdOf = new Map(events.map((e) => [e.entry, e.row.id]));
  return items.map(({ entry }, i) => {
    const r = byEntry.get(i + 1);
    if (!r) throw new Error(`ledger: posting ${entry.kind} ${entry.referenceId} answered nothing`);
    if (r.status === 'duplicate') return new DuplicatePostingError(entry.referenceType, entry.referenceId, entry.kind);
    if (r.status === 'short') return new InsufficientFundsError(ordered[Number(r.account_index) - 1]!.ref, entry.asset);
    if (r.status !== 'ok') throw new Error(`ledger: posting answered ${r.status}`);
    const eventId = eventIdOf.get(i + 1);
    return eventId ? { entryId: entryIds[i]!, eventId } : { entryId: entryIds[i]! };
  });
}
