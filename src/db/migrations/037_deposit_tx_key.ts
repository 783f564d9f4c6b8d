import { sql, type Kysely } from 'kysely';

/**
 * A deposit's transaction is known by its hash whatever the case of its letters when the hash is
 * hex (32 bytes: EVM `0x…`, Bitcoin and TRON ids): `0xAB…` and `0xab…` are one transaction, and
 * compared exactly they credited the member twice. `tx_key` is the hash as compared (lower-case
 * hex; any other form, such as base58, as sent), and the "reported once" rule moves to it; the
 * hash itself is kept as the merchant sent it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE deposits ADD COLUMN tx_key text GENERATED ALWAYS AS (
    CASE WHEN tx_hash ~ '^(0[xX])?[0-9a-fA-F]{64}$' THEN lower(tx_hash) ELSE tx_hash END) STORED`.execute(db);
  await sql`CREATE UNIQUE INDEX deposits_tx_key ON deposits (merchant_id, environment, asset, tx_key)`.execute(db);
  await sql`ALTER TABLE deposits DROP CONSTRAINT deposits_merchant_id_environment_asset_tx_hash_key`.execute(db);
}
