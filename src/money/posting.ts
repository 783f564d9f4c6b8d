import type { Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import { accountKey, accountSpec, type AccountRef, type AccountSpec } from './accounts.js';
import { DuplicatePostingError, InsufficientFundsError } from './errors.js';
import type { Side } from './tables.js';
import { callPostEntry } from './queries/posting.js';

export interface EntryLine {
  account: AccountRef;
  side: Side;
  /** Minor units of the entry's asset, > 0n. */
  amount: bigint;
}

export interface EntryInput {
  environment: Environment;
  /**
   * The merchant the movement belongs to. Every movement has one; the platform accounts the entry
   * touches are the ones kept for this merchant (checked by `assertEntry`).
   */
  merchantId: string;
  /** The movement, e.g. `deposit`, `withdrawal.lock`; with the reference it posts once. */
  kind: string;
  referenceType: string;
  referenceId: string;
  /** One entry moves one asset. */
  asset: string;
  lines: EntryLine[];
}

/** Bound on the lines of one entry (a movement touches a handful of accounts). */
export const entryLinesMax = 16;

interface AccountChange {
  ref: AccountRef;
  spec: AccountSpec;
  /** Change of the stored balance (signed by the account's normal side). */
  delta: bigint;
}

const environments: ReadonlySet<string> = new Set(['sandbox', 'production']);

/** Posting amount: debit positive, credit negative. */
const signed = (line: EntryLine): bigint => (line.side === 'debit' ? line.amount : -line.amount);

/**
 * Programmer errors crash loudly before anything is written: at least two lines, every amount a
 * positive bigint, debits equal to credits. Returns the balance change per touched account.
 */
export function assertEntry(entry: EntryInput): Map<string, AccountChange> {
  if (!environments.has(entry.environment)) throw new Error(`ledger: unknown environment ${String(entry.environment)}`);
  for (const field of ['merchantId', 'kind', 'referenceType', 'referenceId', 'asset'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '')
      throw new Error(`ledger: entry ${field} must be a non-empty string`);
  }
  const lines = entry.lines;
  if (!Array.isArray(lines) || lines.length < 2) throw new Error('ledger: an entry needs at least two lines');
  if (lines.length > entryLinesMax) throw new Error(`ledger: an entry has at most ${entryLinesMax} lines`);
  let debits = 0n;
  let credits = 0n;
  const changes = new Map<string, AccountChange>();
  for (const line of lines) {
    if (typeof line.amount !== 'bigint' || line.amount <= 0n)
      throw new Error(`ledger: line amounts must be bigint > 0n, got ${String(line.amount)}`);
    if (line.side !== 'debit' && line.side !== 'credit') throw new Error(`ledger: unknown side ${String(line.side)}`);
    if (line.side === 'debit') debits += line.amount;
    else credits += line.amount;
    const spec = accountSpec(line.account);
    if (line.account.owner === 'platform' && line.account.merchantId !== entry.merchantId) {
      throw new Error(
        `ledger: entry ${entry.kind} ${entry.referenceId} of merchant ${entry.merchantId} touches the ` +
          `platform ${line.account.bucket} kept for ${line.account.merchantId}`,
      );
    }
    const key = accountKey(line.account);
    const change = changes.get(key) ?? { ref: line.account, spec, delta: 0n };
    change.delta += spec.normalSide === 'debit' ? signed(line) : -signed(line);
    changes.set(key, change);
  }
  if (debits !== credits)
    throw new Error(
      `ledger: unbalanced entry ${entry.kind} ${entry.referenceId}: debits ${debits} != credits ${credits}`,
    );
  return changes;
}

/**
 * Posts one balanced entry inside the caller's transaction: creates missing accounts, locks the
 * touched accounts in ascending id order, refuses a movement that would take a member or
 * merchant account below zero (`InsufficientFundsError`) or that was already posted
 * (`DuplicatePostingError`), then updates the balances and writes the entry and its postings.
 * Both refusals leave nothing written but empty accounts. Several entries in one transaction
 * lock in call order: callers that post more than one keep a fixed order.
 *
 * All of it is one statement, the database function `mwa_post_entry` (migrations 024, 031: the merchant's write lock
 * first): one round
 * trip, so a hot account (a merchant's custody) stays locked only from this statement to the
 * commit. Platform accounts are kept per merchant (`owner_id` = the entry's merchant), so no
 * row is locked by the entries of every merchant. Missing accounts are inserted in key order before any row is locked:
 * a transaction that
 * waits on another's uncommitted account insert holds no row lock of this entry, so it cannot
 * close a cycle.
 */
export async function postEntry(trx: Transaction<Database>, entry: EntryInput): Promise<{ entryId: string }> {
  const changes = [...assertEntry(entry).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
  const indexOf = new Map(changes.map((c, i) => [accountKey(c.ref), i + 1]));
  const entryId = newId('jrn');
  let result: { status: string; account_index: number | null } | undefined;
  try {
    result = await callPostEntry(trx, {
      entryId,
      environment: entry.environment,
      kind: entry.kind,
      referenceType: entry.referenceType,
      referenceId: entry.referenceId,
      merchantId: entry.merchantId,
      asset: entry.asset,
      ownerTypes: changes.map((c) => c.spec.ownerType),
      ownerIds: changes.map((c) => c.spec.ownerId),
      buckets: changes.map((c) => c.spec.bucket),
      normalSides: changes.map((c) => c.spec.normalSide),
      nonNegative: changes.map((c) => c.spec.nonNegative),
      deltas: changes.map((c) => c.delta.toString()),
      lineAccounts: entry.lines.map((l) => indexOf.get(accountKey(l.account))!),
      lineAmounts: entry.lines.map((l) => signed(l).toString()),
    });
  } catch (err) {
    // The CHECK constraint is the backstop: its violation is a shortfall too.
    if (sqlState(err) === '23514') {
      const first = changes.find((c) => c.spec.nonNegative && c.delta < 0n) ?? changes[0]!;
      throw new InsufficientFundsError(first.ref, entry.asset);
    }
    throw err;
  }
  if (!result) throw new Error(`ledger: posting ${entry.kind} ${entry.referenceId} answered nothing`);
  if (result.status === 'duplicate') throw duplicate(entry);
  if (result.status === 'short')
    throw new InsufficientFundsError(changes[Number(result.account_index) - 1]!.ref, entry.asset);
  if (result.status !== 'ok') throw new Error(`ledger: posting answered ${result.status}`);
  return { entryId };
}

const duplicate = (entry: EntryInput) => new DuplicatePostingError(entry.referenceType, entry.referenceId, entry.kind);

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * `postEntry` for request handlers, where a shortfall is a refusal, not a fault: it propagates as
 * `InsufficientFundsError` and the API edge answers the reference's code for the account that
 * would go negative (`insufficient_balance`, `merchant_custody_shortfall`,
 * `merchant_insufficient_funds`; see `src/api-errors.ts`).
 */
export async function postEntryOrRefuse(trx: Transaction<Database>, entry: EntryInput): Promise<{ entryId: string }> {
  return postEntry(trx, entry);
}

/** A row of the merchant's that an entry is referenced by: an order, a card application, a replacement. */
export interface EntryReferenceRow {
  id: string;
  merchant_id: string;
  environment: Environment;
}

/**
 * The merchant, environment and reference of an entry referenced by one of the merchant's rows:
 * its id is the reference, so each kind posts once per row. For an entry's values:
 * `{ ...rowReference(order, 'exchange_order'), kind, asset, lines }`.
 */
export const rowReference = (row: EntryReferenceRow, referenceType: string) => ({
  environment: row.environment,
  merchantId: row.merchant_id,
  referenceType,
  referenceId: row.id,
});

/** Posts an entry referenced by one of the merchant's rows (`rowReference`), of the caller's kind, asset and lines. */
export async function postRowEntry(
  trx: Transaction<Database>,
  row: EntryReferenceRow,
  entry: Pick<EntryInput, 'referenceType' | 'kind' | 'asset' | 'lines'>,
): Promise<void> {
  await postEntry(trx, {
    ...rowReference(row, entry.referenceType),
    kind: entry.kind,
    asset: entry.asset,
    lines: entry.lines,
  });
}
