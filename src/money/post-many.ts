import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import { accountKey, type AccountRef, type AccountSpec } from './accounts.js';
import { DuplicatePostingError, InsufficientFundsError } from './errors.js';
import { eventRow, type EventInput } from '../events/outbox.js';
import { assertEntry, sqlState, type EntryInput, type EntryLine } from './posting.js';
import { callPostEntries, type PostedEntry } from './queries/post-many.js';

/** One movement of `postEntries`: its entry, and the event that reports it (recorded only if the entry posts). */
export interface EntryWithEvent {
  entry: EntryInput;
  event?: EventInput;
  /**
   * The index (in the same call) of an earlier entry that must post before this one may: when it
   * does not, this one writes nothing and answers that one's refusal (an exchange's buy and its sell).
   */
  requires?: number;
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
  for (const [i, { requires }] of items.entries())
    if (requires !== undefined && !(Number.isInteger(requires) && requires >= 0 && requires < i))
      throw new Error(`ledger: entry ${i} of a posting requires ${requires}, not an earlier entry`);
  const requires = items.some((x) => x.requires !== undefined)
    ? items.map((x) => (x.requires === undefined ? null : x.requires + 1))
    : undefined;
  const events = items.flatMap(({ event }, i) => (event ? [{ entry: i + 1, row: eventRow(event) }] : []));
  let rows: PostedEntry[];
  try {
    rows = await callPostEntries(trx, {
      accounts: {
        environments: ordered.map((a) => a.environment),
        assets: ordered.map((a) => a.asset),
        ownerTypes: ordered.map((a) => a.spec.ownerType),
        ownerIds: ordered.map((a) => a.spec.ownerId),
        buckets: ordered.map((a) => a.spec.bucket),
        normalSides: ordered.map((a) => a.spec.normalSide),
        nonNegative: ordered.map((a) => a.spec.nonNegative),
      },
      entries: {
        environments: items.map((x) => x.entry.environment),
        merchantIds: items.map((x) => x.entry.merchantId),
        ids: entryIds,
        kinds: items.map((x) => x.entry.kind),
        referenceTypes: items.map((x) => x.entry.referenceType),
        referenceIds: items.map((x) => x.entry.referenceId),
        assets: items.map((x) => x.entry.asset),
      },
      deltas: {
        entries: deltas.map((d) => d.entry),
        accounts: deltas.map((d) => indexOf.get(d.account)!),
        amounts: deltas.map((d) => d.delta.toString()),
      },
      lines: {
        entries: lines.map((l) => l.entry),
        accounts: lines.map((l) => indexOf.get(l.account)!),
        amounts: lines.map((l) => l.amount.toString()),
      },
      events: { entries: events.map((e) => e.entry), rows: events.map((e) => e.row) },
      ...(requires ? { requires } : {}),
    });
  } catch (err) {
    // The CHECK constraint is the backstop of the function's own check: no entry can be told apart here.
    if (sqlState(err) === '23514')
      throw new Error(`ledger: a balance check failed in a posting of ${items.length} entries`, { cause: err });
    throw err;
  }
  const byEntry = new Map(rows.map((r) => [Number(r.entry_index), r]));
  const eventIdOf = new Map(events.map((e) => [e.entry, e.row.id]));
  const outcomes: PostOutcome[] = [];
  for (const [i, { entry, requires }] of items.entries()) {
    const r = byEntry.get(i + 1);
    if (!r) throw new Error(`ledger: posting ${entry.kind} ${entry.referenceId} answered nothing`);
    if (r.status === 'skipped' && requires !== undefined) {
      const required = outcomes[requires]!;
      if (!(required instanceof Error))
        throw new Error(`ledger: ${entry.kind} ${entry.referenceId} skipped after a posting`);
      outcomes.push(required);
      continue;
    }
    outcomes.push(outcomeOf(r, entry, i));
  }
  return outcomes;

  function outcomeOf(r: PostedEntry, entry: EntryInput, i: number): PostOutcome {
    if (r.status === 'duplicate') return new DuplicatePostingError(entry.referenceType, entry.referenceId, entry.kind);
    if (r.status === 'short') return new InsufficientFundsError(ordered[Number(r.account_index) - 1]!.ref, entry.asset);
    if (r.status !== 'ok') throw new Error(`ledger: posting answered ${r.status}`);
    const eventId = eventIdOf.get(i + 1);
    return eventId ? { entryId: entryIds[i]!, eventId } : { entryId: entryIds[i]! };
  }
}
