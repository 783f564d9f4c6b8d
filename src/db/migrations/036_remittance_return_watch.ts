import { sql, type Kysely } from 'kysely';

/**
 * A completed payout can still come back from the beneficiary's bank (a closed account, a
 * recall): completed remittance orders are asked about again for a while (the return watch,
 * src/modules/remittance/orders/return-watch.ts). `return_checks` counts the questions asked,
 * `return_check_at` is when the next is due (null: not watched).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE remit_orders ADD COLUMN return_checks integer NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE remit_orders ADD COLUMN return_check_at timestamptz`.execute(db);
  await sql`CREATE INDEX remit_orders_return_check ON remit_orders (return_check_at)
    WHERE return_check_at IS NOT NULL`.execute(db);
}
