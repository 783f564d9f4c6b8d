import { sql, type RawBuilder } from 'kysely';
import type { Trx } from '../../db/schema.js';

/**
 * The ledger verification's reads (money/verify.ts, docs/ledger.md): each finds the rows that break
 * one invariant, at most `limit` of them, in the caller's read-only snapshot.
 */

/** How many entries, postings and accounts the snapshot holds. */
export async function countLedgerRows(trx: Trx) {
  const { rows } = await sql<{ entries: bigint; postings: bigint; accounts: bigint }>`
      SELECT (SELECT count(*) FROM journal_entries) AS entries,
             (SELECT count(*) FROM postings) AS postings,
             (SELECT count(*) FROM ledger_accounts) AS accounts`.execute(trx);
  return rows[0]!;
}

export async function selectAssetTotals(trx: Trx) {
  const { rows } = await sql<{ environment: string; asset: string; total: string }>`
    SELECT a.environment, p.asset, sum(p.amount) AS total
    FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
    GROUP BY a.environment, p.asset
    HAVING sum(p.amount) <> 0
    ORDER BY a.environment, p.asset`.execute(trx);
  return rows;
}

/** An account as the checks report it. */
interface AccountRow {
  id: bigint;
  environment: string;
  owner_type: string;
  owner_id: string;
  asset: string;
  bucket: string;
  balance: string;
}

/**
 * The statements of the checks that list the rows breaking an invariant, each in its order;
 * `firstRows` runs one with its limit (money/verify.ts).
 */
export const offendingRows = {
  unbalancedEntries: sql<{ id: string; postings: bigint; total: string }>`
    SELECT e.id, count(p.id) AS postings, coalesce(sum(p.amount), 0) AS total
    FROM journal_entries e LEFT JOIN postings p ON p.entry_id = e.id
    GROUP BY e.id
    HAVING count(p.id) < 2 OR coalesce(sum(p.amount), 0) <> 0
    ORDER BY e.id`,
  mismatchedPostings: sql<{
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
    ORDER BY p.id`,
  driftedAccounts: sql<AccountRow & { posted: string }>`
    SELECT a.id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket, a.balance,
           CASE WHEN a.normal_side = 'debit' THEN coalesce(sum(p.amount), 0) ELSE -coalesce(sum(p.amount), 0) END AS
             posted
    FROM ledger_accounts a LEFT JOIN postings p ON p.account_id = a.id
    GROUP BY a.id
    HAVING a.balance <> CASE WHEN a.normal_side = 'debit' THEN coalesce(sum(p.amount), 0) ELSE
      -coalesce(sum(p.amount), 0) END
    ORDER BY a.id`,
  negativeAccounts: sql<AccountRow>`
    SELECT id, environment, owner_type, owner_id, asset, bucket, balance
    FROM ledger_accounts WHERE non_negative AND balance < 0
    ORDER BY id`,
  orphanMemberAccounts: sql<Omit<AccountRow, 'balance'>>`
    SELECT a.id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket
    FROM ledger_accounts a
    WHERE a.owner_type = 'member'
      AND NOT EXISTS (SELECT 1 FROM members m WHERE m.id = a.owner_id AND m.environment = a.environment)
    ORDER BY a.id`,
  misattributedPlatformPostings: sql<Omit<AccountRow, 'balance'> & { entry_id: string; merchant_id: string | null }>`
    SELECT p.id, p.entry_id, e.merchant_id, a.environment, a.owner_type, a.owner_id, a.asset, a.bucket
    FROM postings p
    JOIN ledger_accounts a ON a.id = p.account_id
    JOIN journal_entries e ON e.id = p.entry_id
    WHERE a.owner_type = 'platform' AND a.owner_id <> '' AND e.merchant_id IS DISTINCT FROM a.owner_id
    ORDER BY p.id`,
  custodyMismatches: sql<{
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
    ORDER BY k.environment, k.merchant_id, k.asset`,
};

/** The first `limit` rows a check's statement finds. */
export async function firstRows<R>(trx: Trx, statement: RawBuilder<R>, limit: number): Promise<R[]> {
  const { rows } = await sql<R>`${statement}
    LIMIT ${limit}`.execute(trx);
  return rows;
}
