import { sql, type Kysely } from 'kysely';

/**
 * A 64-hex-digit transaction hash names one transaction with or without its `0x` prefix, as the
 * deposit route says: `0xab…` and `ab…` (an EVM client's and a block explorer's spelling of one
 * hash) were two keys under migration 037, so the second report credited the member again.
 * `tx_key` is now the bare lower-case hex for such a hash (any other form still exactly as sent).
 *
 * A database that already holds such a pair (one transaction credited twice) cannot take the
 * unique index: the migration then stops with PostgreSQL's duplicate-key error naming the pair,
 * and the operator reconciles it (reverses the second credit) before starting the service.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX deposits_tx_key`.execute(db);
  await sql`ALTER TABLE deposits DROP COLUMN tx_key`.execute(db);
  await sql`ALTER TABLE deposits ADD COLUMN tx_key text GENERATED ALWAYS AS (
    CASE WHEN tx_hash ~ '^(0[xX])?[0-9a-fA-F]{64}$' THEN lower(right(tx_hash, 64)) ELSE tx_hash END) STORED`.execute(
    db,
  );
  await sql`CREATE UNIQUE INDEX deposits_tx_key ON deposits (merchant_id, environment, asset, tx_key)`.execute(db);
}
