import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { nonceWindowSeconds } from './signing.js';

/**
 * Consumes a nonce for the merchant and environment. True when it was fresh. An expired row is
 * taken over in the same statement, so the window is exact without waiting for cleanup.
 */
export async function consumeNonce(db: Kysely<Database>, merchantId: string, environment: Environment, nonce: string): Promise<boolean> {
  const { rows } = await sql<{ nonce: string }>`
    INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
    VALUES (${merchantId}, ${environment}, ${nonce}, now() + make_interval(secs => ${nonceWindowSeconds}))
    ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
      WHERE signature_nonces.expires_at <= now()
    RETURNING nonce
  `.execute(db);
  return rows.length === 1;
}

export async function purgeExpiredNonces(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('signature_nonces').where('expires_at', '<=', sql<Date>`now()`).execute();
}
