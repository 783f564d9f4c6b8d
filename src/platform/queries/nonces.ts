import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StoredResult } from './idempotency.js';

/** The statements of signature nonces (platform/writes/nonces.ts, platform/writes/nonce-batch.ts). */

/** Inserts a nonce, or takes over its row when expired at `now`: true when it was fresh. */
export async function insertNonce(
  db: Kysely<Database>,
  nonce: { merchantId: string; environment: string; nonce: string; expiresAt: Date },
  now: Date,
): Promise<boolean> {
  const { rows } = await sql<{ nonce: string }>`
    INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
    VALUES (${nonce.merchantId}, ${nonce.environment}, ${nonce.nonce}, ${nonce.expiresAt})
    ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
      WHERE signature_nonces.expires_at <= ${now}
    RETURNING nonce
  `.execute(db);
  return rows.length === 1;
}

export async function deleteExpiredNonces(db: Kysely<Database>, now: Date): Promise<void> {
  await db.deleteFrom('signature_nonces').where('expires_at', '<=', now).execute();
}

/** The columns of a batch of nonces to consume, one entry per nonce (a key's columns null: none to read). */
export interface NonceColumns {
  merchantIds: string[];
  environments: string[];
  nonces: string[];
  /** ISO timestamps. */
  expiresAt: string[];
  keyMerchantIds: (string | null)[];
  keyEnvironments: (string | null)[];
  keys: (string | null)[];
}

/** One row per nonce (`ord` from 1): fresh or not, and its key's record within the window. */
export type NonceRow = { ord: string; fresh: boolean } & Partial<StoredResult>;

/**
 * Consumes the nonces in one statement (an expired row taken over when expired at `now`), and
 * reads each key's record written within the last `windowHours`.
 */
export async function insertNonces(
  db: Kysely<Database>,
  c: NonceColumns,
  now: Date,
  windowHours: number,
): Promise<NonceRow[]> {
  const { rows } = await sql<NonceRow>`
    WITH input AS (
      SELECT * FROM unnest(${c.merchantIds}::text[], ${c.environments}::text[],
        ${c.nonces}::text[],
                           ${c.expiresAt}::timestamptz[],
                           ${c.keyMerchantIds}::text[],
                             ${c.keyEnvironments}::text[],
                             ${c.keys}::text[])
        WITH ORDINALITY AS i(merchant_id, environment, nonce, expires_at, key_merchant_id, key_environment, key, ord)
    ),
    consumed AS (
      INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
      SELECT merchant_id, environment, nonce, expires_at FROM input ORDER BY ord
      ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
        WHERE signature_nonces.expires_at <= ${now}
      RETURNING merchant_id, environment, nonce
    )
    SELECT i.ord, EXISTS (SELECT 1 FROM consumed c WHERE c.merchant_id = i.merchant_id AND c.environment =
      i.environment AND c.nonce = i.nonce) AS fresh,
           k.endpoint, k.request_hash, k.status_code, k.response_body, k.created_at
    FROM input i
    LEFT JOIN idempotency_keys k ON k.merchant_id = i.key_merchant_id AND k.environment = i.key_environment AND k.key
      = i.key
      AND k.created_at > now() - make_interval(hours => ${windowHours})
  `.execute(db);
  return rows;
}
