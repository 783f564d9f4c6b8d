import { sql, type Kysely } from 'kysely';

/**
 * Migration 048 added `members_merchant_seq (merchant_id, environment, seq)` for the
 * `member_balances` export's walk. Under generic plans PostgreSQL then resolved a deposit's
 * member by external id through it (a scan of the merchant's members, 339 buffers with 10,000 of
 * them) instead of the unique `(merchant_id, environment, external_member_id)`
 * (`test/ledger-plans.test.ts`). The export walks the members by external id on that unique index
 * instead, and this index goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS members_merchant_seq`.execute(db);
}
