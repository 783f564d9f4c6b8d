import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * 1. `GET /v1/deposits` pages a merchant's deposits of one environment newest first.
 * 2. Until this migration a withdrawal confirmation reduced custody by the amount only and
 *    credited the fee to the platform's fee income, so custody kept the fee. One correcting entry
 *    per such confirmation (kind `withdrawal.fee_correction`) posts the difference to today's rule
 *    (docs/ledger.md): the fee leaves the platform's fee income and the merchant's custody and is
 *    recognised as the merchant's fee income. A merchant whose custody can no longer cover its
 *    fees (the operator reduced it since) is left for `ledger:verify` to report, rather than
 *    refusing to start.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE INDEX IF NOT EXISTS deposits_merchant ON deposits (merchant_id, environment, seq);

    CREATE TEMP TABLE fee_corrections ON COMMIT DROP AS
      SELECT 'jrn_' || gen_random_uuid()::text AS entry_id, e.environment, e.merchant_id, e.asset,
             e.reference_type, e.reference_id, -p.amount AS fee
      FROM journal_entries e
      JOIN postings p ON p.entry_id = e.id
      JOIN ledger_accounts a ON a.id = p.account_id
      WHERE e.kind = 'withdrawal.confirm' AND e.merchant_id IS NOT NULL
        AND a.owner_type = 'platform' AND a.bucket = 'fee_income' AND p.amount < 0
        AND NOT EXISTS (
          SELECT 1 FROM journal_entries x
          WHERE x.environment = e.environment AND x.reference_type = e.reference_type
            AND x.reference_id = e.reference_id AND x.kind = 'withdrawal.fee_correction');

    DELETE FROM fee_corrections f
    WHERE (SELECT c.balance FROM ledger_accounts c
           WHERE c.environment = f.environment AND c.owner_type = 'merchant' AND c.owner_id = f.merchant_id
             AND c.asset = f.asset AND c.bucket = 'custody')
        < (SELECT sum(g.fee) FROM fee_corrections g
           WHERE g.environment = f.environment AND g.merchant_id = f.merchant_id AND g.asset = f.asset);

    INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
      SELECT DISTINCT f.environment, 'merchant', f.merchant_id, f.asset, b.bucket, b.normal_side, true
      FROM fee_corrections f
      CROSS JOIN (VALUES ('fee_income', 'credit'), ('fee_retained', 'debit')) AS b (bucket, normal_side)
      ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;

    INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      SELECT entry_id, environment, 'withdrawal.fee_correction', reference_type, reference_id, merchant_id, asset
      FROM fee_corrections;

    -- Debit platform fee income and merchant fee_retained; credit merchant custody and fee income.
    INSERT INTO postings (entry_id, account_id, asset, amount)
      SELECT f.entry_id, a.id, f.asset, l.sign * f.fee
      FROM fee_corrections f
      CROSS JOIN (VALUES ('platform', 'fee_income', 1), ('merchant', 'custody', -1),
                         ('merchant', 'fee_retained', 1), ('merchant', 'fee_income', -1))
                           AS l (owner_type, bucket, sign)
      JOIN ledger_accounts a
        ON a.environment = f.environment AND a.asset = f.asset AND a.owner_type = l.owner_type AND a.bucket = l.bucket
       AND a.owner_id = CASE WHEN l.owner_type = 'platform' THEN '' ELSE f.merchant_id END;

    UPDATE ledger_accounts a SET balance = a.balance + d.delta
      FROM (
        SELECT p.account_id, sum(CASE WHEN acc.normal_side = 'debit' THEN p.amount ELSE -p.amount END) AS delta
        FROM postings p
        JOIN fee_corrections f ON f.entry_id = p.entry_id
        JOIN ledger_accounts acc ON acc.id = p.account_id
        GROUP BY p.account_id
      ) d
      WHERE a.id = d.account_id;
  `,
  );
}
