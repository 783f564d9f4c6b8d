import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';

/** The statements of access tokens (platform/auth/auth.ts). */

/** An API key joined with its merchant: what authenticating with it (a token, a client id) checks. */
export interface KeyWithMerchant {
  key_id: string;
  merchant_id: string;
  environment: Environment;
  signing_key: string;
  scopes: string[];
  ip_allowlist: string;
  disabled: boolean;
  key_expires_at: Date | null;
  merchant_status: string;
}

/** A token with its key and merchant, as a request's authentication reads them. */
export async function selectTokenRow(db: Kysely<Database>, tokenHash: string) {
  const { rows } = await sql<KeyWithMerchant & { token_expires_at: Date }>`
    SELECT t.expires_at AS token_expires_at, k.id AS key_id, k.merchant_id, k.environment, k.signing_key, k.scopes,
           k.ip_allowlist, k.disabled, k.expires_at AS key_expires_at, m.status AS merchant_status
    FROM access_tokens t
    JOIN api_keys k ON k.id = t.key_id AND k.token_generation = t.key_generation
    JOIN merchants m ON m.id = k.merchant_id
    WHERE t.token_hash = ${tokenHash}
  `.execute(db);
  return rows[0];
}

/** Deletes the tokens expired more than an hour ago. */
export async function deleteExpiredTokens(db: Kysely<Database>): Promise<void> {
  await db
    .deleteFrom('access_tokens')
    .where('expires_at', '<', sql<Date>`now() - interval '1 hour'`)
    .execute();
}
