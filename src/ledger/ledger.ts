import { sql, type Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import { accountKey, accountSpec, refFromRow, type AccountRef, type AccountSpec } from './accounts.js';
import { DuplicatePostingError, InsufficientFundsError } from './errors.js';
import { minorFromDb } from './money.js';
import type { Side } from './tables.js';

export interface EntryLine {
  account: AccountRef;
  side: Side;
  /** Minor units of the entry's asset, > 0n. */
  amount: bigint;
}

export interface EntryInput {
  environment: Environment;
  /** The merchant the movement belongs to; null for platform-only movements. */
  merchantId: string | null;
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

interface LockedAccount {
  id: bigint;
  owner_type: string;
  owner_id: string;
  bucket: string;
  normal_side: string;
  non_negative: boolean;
  balance: string;
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
  for (const field of ['kind', 'referenceType', 'referenceId', 'asset'] as const) {
    if (typeof entry[field] !== 'string' || entry[field] === '') throw new Error(`ledger: entry ${field} must be a non-empty string`);
  }
  const lines = entry.lines;
  if (!Array.isArray(lines) || lines.length < 2) throw new Error('ledger: an entry needs at least two lines');
  if (lines.length > entryLinesMax) throw new Error(`ledger: an entry has at most ${entryLinesMax} lines`);
  let debits = 0n;
  let credits = 0n;
  const changes = new Map<string, AccountChange>();
  for (const line of lines) {
    if (typeof line.amount !== 'bigint' || line.amount <= 0n) throw new Error(`ledger: line amounts must be bigint > 0n, got ${String(line.amount)}`);
    if (line.side !== 'debit' && line.side !== 'credit') throw new Error(`ledger: unknown side ${String(line.side)}`);
    if (line.side === 'debit') debits += line.amount;
    else credits += line.amount;
    const spec = accountSpec(line.account);
    const key = accountKey(line.account);
    const change = changes.get(key) ?? { ref: line.account, spec, delta: 0n };
    change.delta += spec.normalSide === 'debit' ? signed(line) : -signed(line);
    changes.set(key, change);
  }
  if (debits !== credits) throw new Error(`ledger: unbalanced entry ${entry.kind} ${entry.referenceId}: debits ${debits} != credits ${credits}`);
  return changes;
}

/**
 * Posts one balanced entry inside the caller's transaction: creates missing accounts, locks the
 * touched accounts in ascending id order, refuses a movement that would take a member or
 * merchant account below zero (`InsufficientFundsError`) or that was already posted
 * (`DuplicatePostingError`), then updates the balances and writes the entry and its postings.
 * Both refusals leave nothing written but empty accounts. Several entries in one transaction
 * lock in call order: callers that post more than one keep a fixed order.
 */
export async function postEntry(trx: Transaction<Database>, entry: EntryInput): Promise<{ entryId: string }> {
  const changes = assertEntry(entry);
  const locked = await lockAccounts(trx, entry.environment, entry.asset, [...changes.values()]);
  const short = shortfall(locked, changes);
  if (short) {
    if (await entryExists(trx, entry)) throw duplicate(entry);
    throw new InsufficientFundsError(short, entry.asset);
  }
  const entryId = newId('jrn');
  const inserted = await trx
    .insertInto('journal_entries')
    .values({
      id: entryId,
      environment: entry.environment,
      kind: entry.kind,
      reference_type: entry.referenceType,
      reference_id: entry.referenceId,
      merchant_id: entry.merchantId,
      asset: entry.asset,
    })
    .onConflict((oc) => oc.columns(['environment', 'reference_type', 'reference_id', 'kind']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) throw duplicate(entry);
  await applyBalances(trx, entry.asset, locked, changes);
  const byKey = new Map(locked.map((row) => [accountKey(refFromRow(row)), row.id]));
  await trx
    .insertInto('postings')
    .values(entry.lines.map((line) => ({
      entry_id: entryId,
      account_id: byKey.get(accountKey(line.account))!,
      asset: entry.asset,
      amount: signed(line).toString(),
    })))
    .execute();
  return { entryId };
}

const duplicate = (entry: EntryInput) => new DuplicatePostingError(entry.referenceType, entry.referenceId, entry.kind);

async function entryExists(trx: Transaction<Database>, entry: EntryInput): Promise<boolean> {
  const row = await trx
    .selectFrom('journal_entries')
    .select('id')
    .where('environment', '=', entry.environment)
    .where('reference_type', '=', entry.referenceType)
    .where('reference_id', '=', entry.referenceId)
    .where('kind', '=', entry.kind)
    .executeTakeFirst();
  return row !== undefined;
}

/** The accounts of an environment and asset that the specs name. */
function matching(trx: Transaction<Database>, environment: Environment, asset: string, specs: AccountSpec[]) {
  return trx
    .selectFrom('ledger_accounts')
    .where('environment', '=', environment)
    .where('asset', '=', asset)
    .where((eb) => eb.or(specs.map((s) => eb.and([eb('owner_type', '=', s.ownerType), eb('owner_id', '=', s.ownerId), eb('bucket', '=', s.bucket)]))));
}

/**
 * Locks every touched account, in ascending id order (the ORDER BY sits below the row locking),
 * so two entries over the same accounts never wait on each other crosswise. Missing accounts
 * are inserted first, in key order, before any row is locked: a transaction that waits on
 * another's uncommitted account insert holds no row lock of this entry, so it cannot close a
 * cycle. The plain look-up costs one round trip but happens before the locks, so it does not
 * lengthen the time a hot row (merchant custody) is held.
 */
async function lockAccounts(trx: Transaction<Database>, environment: Environment, asset: string, changes: AccountChange[]): Promise<LockedAccount[]> {
  const specs = changes.map((c) => c.spec);
  const existing = await matching(trx, environment, asset, specs).select(['owner_type', 'owner_id', 'bucket']).execute();
  if (existing.length < specs.length) {
    const present = new Set(existing.map((r) => accountKey(refFromRow(r))));
    const missing = changes.filter((c) => !present.has(accountKey(c.ref))).sort((a, b) => (accountKey(a.ref) < accountKey(b.ref) ? -1 : 1));
    await trx
      .insertInto('ledger_accounts')
      .values(missing.map(({ spec }) => ({
        environment,
        owner_type: spec.ownerType,
        owner_id: spec.ownerId,
        asset,
        bucket: spec.bucket,
        normal_side: spec.normalSide,
        non_negative: spec.nonNegative,
      })))
      .onConflict((oc) => oc.columns(['environment', 'owner_type', 'owner_id', 'asset', 'bucket']).doNothing())
      .execute();
  }
  const rows = await matching(trx, environment, asset, specs)
    .select(['id', 'owner_type', 'owner_id', 'bucket', 'normal_side', 'non_negative', 'balance'])
    .orderBy('id')
    .forUpdate()
    .execute();
  if (rows.length !== specs.length) throw new Error(`ledger: locked ${rows.length} accounts, expected ${specs.length}`);
  for (const row of rows) {
    const spec = accountSpec(refFromRow(row));
    if (row.normal_side !== spec.normalSide || row.non_negative !== spec.nonNegative) {
      throw new Error(`ledger: account ${row.id} rules differ from its reference`);
    }
  }
  return rows;
}

/** The first non-negative account (in lock order) the changes would take below zero. */
function shortfall(locked: LockedAccount[], changes: Map<string, AccountChange>): AccountRef | undefined {
  for (const row of locked) {
    const ref = refFromRow(row);
    const change = changes.get(accountKey(ref))!;
    if (row.non_negative && minorFromDb(row.balance) + change.delta < 0n) return change.ref;
  }
  return undefined;
}

/**
 * Writes the new balances as `balance + delta` and asserts each result is the one computed
 * under the lock. The CHECK constraint is the backstop: its violation is a shortfall too.
 */
async function applyBalances(trx: Transaction<Database>, asset: string, locked: LockedAccount[], changes: Map<string, AccountChange>): Promise<void> {
  for (const row of locked) {
    const change = changes.get(accountKey(refFromRow(row)))!;
    if (change.delta === 0n) continue;
    let updated: { balance: string } | undefined;
    try {
      updated = await trx
        .updateTable('ledger_accounts')
        .set({ balance: sql<string>`balance + ${change.delta.toString()}::numeric` })
        .where('id', '=', row.id)
        .returning('balance')
        .executeTakeFirst();
    } catch (err) {
      if (sqlState(err) === '23514') throw new InsufficientFundsError(change.ref, asset);
      throw err;
    }
    const expected = minorFromDb(row.balance) + change.delta;
    if (!updated || minorFromDb(updated.balance) !== expected) {
      throw new Error(`ledger: account ${row.id} balance ${updated?.balance} after update, expected ${expected}`);
    }
  }
}

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
