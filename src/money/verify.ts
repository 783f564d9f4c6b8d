import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { describeStored } from './accounts.js';

export interface LedgerReport {
  ok: boolean;
  problems: string[];
  checked: { entries: number; postings: number; accounts: number };
}

/** Bound on the problems each check reports (the report says when it stopped there). */
export const problemsPerCheckMax = 50;

type Trx = Transaction<Database>;

/**
 * Checks the ledger's invariants over one snapshot (a read-only REPEATABLE READ transaction):
 * every entry has two or more postings that sum to zero, in the entry's asset and environment;
 * postings of each asset sum to zero per environment; each account's stored balance equals the
 * sum of its postings signed by its normal side; no member or merchant account is negative; a
 * platform account kept for a merchant is moved only by that merchant's entries; each merchant's
 * custody equals what its members hold plus its net settlement position (see `custodyMismatches`,
 * and docs/ledger.md "Custody").
 */
export async function verifyLedger(db: Kysely<Database>): Promise<LedgerReport> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const problems = [
        ...(await unbalancedEntries(trx)),
        ...(await mismatchedPostings(trx)),
        ...(await assetTotals(trx)),
        ...(await accountDrift(trx)),
        ...(await negativeAccounts(trx)),
        ...(await orphanMemberAccounts(trx)),
        ...(await misattributedPlatformPostings(trx)),
        ...(await custodyMismatches(trx)),
      ];
      const { rows } = await sql<{ entries: bigint; postings: bigint; accounts: bigint }>`
      SELECT (SELECT count(*) FROM journal_entries) AS entries,
             (SELECT count(*) FROM postings) AS postings,
             (SELECT count(*) FROM ledger_accounts) AS accounts`.execute(trx);
      const counts = rows[0]!;
      return {
        ok: problems.length === 0,
        problems,
        checked: {
          entries: Number(counts.entries),
          postings: Number(counts.postings),
          accounts: Number(counts.accounts),
        },
      };
    });
}

/** Plain text of a row: a tampered row must not make the report itself fail. */
const label = (r: { owner_type: string; owner_id: string; bucket: string }) => describeStored(r);

function bounded(found: string[], what: string): string[] {
  if (found.length <= problemsPerCheckMax) return found;
  return [...found.slice(0, problemsPerCheckMax), `... more ${what} not listed`];
}

async function unbalancedEntries(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{ id: string; postings: bigint; total: string }>`
    SELECT e.id, count(p.id) AS postings, coalesce(sum(p.amount), 0) AS total
    FROM journal_entries e LEFT JOIN postings p ON p.entry_id = e.id
    GROUP BY e.id
    HAVING count(p.id) < 2 OR coalesce(sum(p.amount), 0) <> 0
    ORDER BY e.id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map((r) => `entry ${r.id}: ${r.postings} postings summing to ${r.total} (needs at least 2 summing to 0)`),
    'unbalanced entries',
  );
}

async function mismatchedPostings(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    id: bigint;
    entry_id: string;
    asset: string;
    entry_asset: string;
    account_asset: string;
    entry_env: string;
    account_env: string;
  }>`
    SELECT p.id, p.entry_id, p.asset, e.asset AS entry_asset, a.asset AS account_asset,
           e.environment AS entry_env, a.environment AS account_env
    FROM postings p
    JOIN journal_entries e ON e.id = p.entry_id
    JOIN ledger_accounts a ON a.id = p.account_id
    WHERE p.asset <> e.asset OR p.asset <> a.asset OR e.environment <> a.environment
    ORDER BY p.id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map(
      (r) =>
        `posting ${r.id} of entry ${r.entry_id}: asset ${r.asset}, entry ${r.entry_asset} in ${r.entry_env}, ` +
        `account ${r.account_asset} in ${r.account_env}`,
    ),
    'mismatched postings',
  );
}

async function assetTotals(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{ environment: string; asset: string; total: string }>`
    SELECT a.environment, p.asset, sum(p.amount) AS total
    FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
    GROUP BY a.environment, p.asset
    HAVING sum(p.amount) <> 0
    ORDER BY a.environment, p.asset`.execute(trx);
  return rows.map((r) => `asset ${r.asset} in ${r.environment}: postings sum to ${r.total}, not 0`);
}

async function accountDrift(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    id: bigint;
    environment: string;
    owner_type: string;
    owner_id: string;
    asset: string;
    bucket: string;
    balance: string;
    posted: string;
  }>`
    SELECT a.id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket, a.balance,
           CASE WHEN a.normal_side = 'debit' THEN coalesce(sum(p.amount), 0) ELSE -coalesce(sum(p.amount), 0) END AS
             posted
    FROM ledger_accounts a LEFT JOIN postings p ON p.account_id = a.id
    GROUP BY a.id
    HAVING a.balance <> CASE WHEN a.normal_side = 'debit' THEN coalesce(sum(p.amount), 0) ELSE
      -coalesce(sum(p.amount), 0) END
    ORDER BY a.id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map(
      (r) =>
        `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): stored balance ${r.balance}, postings ` +
        `give ${r.posted}`,
    ),
    'drifted accounts',
  );
}

async function negativeAccounts(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    id: bigint;
    environment: string;
    owner_type: string;
    owner_id: string;
    asset: string;
    bucket: string;
    balance: string;
  }>`
    SELECT id, environment, owner_type, owner_id, asset, bucket, balance
    FROM ledger_accounts WHERE non_negative AND balance < 0
    ORDER BY id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map((r) => `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): negative balance ${r.balance}`),
    'negative accounts',
  );
}

/** A member account whose member does not exist in the account's environment belongs to no merchant. */
async function orphanMemberAccounts(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    id: bigint;
    environment: string;
    owner_type: string;
    owner_id: string;
    asset: string;
    bucket: string;
  }>`
    SELECT a.id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket
    FROM ledger_accounts a
    WHERE a.owner_type = 'member'
      AND NOT EXISTS (SELECT 1 FROM members m WHERE m.id = a.owner_id AND m.environment = a.environment)
    ORDER BY a.id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map((r) => `account ${r.id} (${label(r)}, ${r.asset}, ${r.environment}): no such member in ${r.environment}`),
    'orphan member accounts',
  );
}

/**
 * A platform account kept for a merchant (`owner_id` = the merchant, since migration 026) moved by
 * an entry of another merchant, or of none: the per-merchant split, and with it the settlement term
 * of the custody check, would no longer say whose money it is. The shared rows of before 026
 * (`owner_id` '') were moved by every merchant's entries and are not checked here.
 */
async function misattributedPlatformPostings(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    id: bigint;
    entry_id: string;
    merchant_id: string | null;
    environment: string;
    owner_type: string;
    owner_id: string;
    asset: string;
    bucket: string;
  }>`
    SELECT p.id, p.entry_id, e.merchant_id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket
    FROM postings p
    JOIN ledger_accounts a ON a.id = p.account_id
    JOIN journal_entries e ON e.id = p.entry_id
    WHERE a.owner_type = 'platform' AND a.owner_id <> '' AND e.merchant_id IS DISTINCT FROM a.owner_id
    ORDER BY p.id
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map(
      (r) =>
        `posting ${r.id} of entry ${r.entry_id} (merchant ${r.merchant_id ?? 'none'}): moves ${label(r)} ` +
        `(${r.asset}, ${r.environment})`,
    ),
    'misattributed platform postings',
  );
}

/**
 * For each environment, merchant and asset:
 *
 *   custody = sum of every account of the merchant's members (available, frozen, withdrawing,
 *             earn, card) + settlement
 *
 * where settlement is the net credit of the platform's settlement clearing accounts in the
 * merchant's entries (QR payments completed minus refunded, less the operator's custody
 * decreases, plus its increases): member money that left to an acquirer while the merchant still
 * holds it; it also counts the platform's `earn_interest` accounts in the merchant's entries
 * (interest the platform paid the merchant's members and still owes the merchant's custody, a
 * negative term; docs/earn.md). Custody is the stored balance; so are the members' buckets.
 *
 * Settlement is summed from postings by the entry's merchant, whichever platform row they are on:
 * the merchant's own rows (since migration 026, `owner_id` = the merchant; only its entries move
 * them, `misattributedPlatformPostings`) and its share of the shared rows of before 026
 * (`owner_id` ''), so a database from before the split verifies as it did.
 */
async function custodyMismatches(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{
    environment: string;
    merchant_id: string;
    asset: string;
    custody: string;
    members: string;
    settlement: string;
  }>`
    WITH custody AS (
      SELECT environment, owner_id AS merchant_id, asset, balance
      FROM ledger_accounts
      WHERE owner_type = 'merchant' AND bucket = 'custody'
    ), held AS (
      SELECT a.environment, m.merchant_id, a.asset, sum(a.balance) AS balance
      FROM ledger_accounts a JOIN members m ON m.id = a.owner_id AND m.environment = a.environment
      WHERE a.owner_type = 'member'
      GROUP BY a.environment, m.merchant_id, a.asset
    ), settlement AS (
      SELECT e.environment, e.merchant_id, p.asset, -sum(p.amount) AS balance
      FROM postings p
      JOIN ledger_accounts a ON a.id = p.account_id
      JOIN journal_entries e ON e.id = p.entry_id
      WHERE a.owner_type = 'platform' AND a.bucket IN ('settlement_clearing', 'earn_interest') AND e.merchant_id IS
        NOT NULL
      GROUP BY e.environment, e.merchant_id, p.asset
    ), keys AS (
      SELECT environment, merchant_id, asset FROM custody
      UNION SELECT environment, merchant_id, asset FROM held
      UNION SELECT environment, merchant_id, asset FROM settlement
    )
    SELECT k.environment, k.merchant_id, k.asset,
           coalesce(c.balance, 0) AS custody, coalesce(h.balance, 0) AS members, coalesce(s.balance, 0) AS settlement
    FROM keys k
    LEFT JOIN custody c ON c.environment = k.environment AND c.merchant_id = k.merchant_id AND c.asset = k.asset
    LEFT JOIN held h ON h.environment = k.environment AND h.merchant_id = k.merchant_id AND h.asset = k.asset
    LEFT JOIN settlement s ON s.environment = k.environment AND s.merchant_id = k.merchant_id AND s.asset = k.asset
    WHERE coalesce(c.balance, 0) <> coalesce(h.balance, 0) + coalesce(s.balance, 0)
    ORDER BY k.environment, k.merchant_id, k.asset
    LIMIT ${problemsPerCheckMax + 1}`.execute(trx);
  return bounded(
    rows.map(
      (r) =>
        `custody of merchant ${r.merchant_id} (${r.asset}, ${r.environment}): ${r.custody}, but its members ` +
        `hold ${r.members} and its settlement position is ${r.settlement}`,
    ),
    'custody mismatches',
  );
}
