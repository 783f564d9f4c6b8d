import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { KeyWithMerchant } from '../../platform/queries/auth.js';

/** Reads and writes of the token exchange: the key behind a client id, and the token row. */

/** An API key joined with its merchant, as the token exchange reads it. */
export interface VerifiedKey extends KeyWithMerchant {
  api_key_hash: string;
  token_generation: number;
}

/** The key of a client id joined with its merchant; undefined when the client id is unknown. */
export async function findKeyByClientId(db: Kysely<Database>, clientId: string): Promise<VerifiedKey | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('merchants as m', 'm.id', 'k.merchant_id')
    .select([
      'k.id as key_id',
      'k.merchant_id',
      'k.environment',
      'k.api_key_hash',
      'k.signing_key',
      'k.scopes',
      'k.ip_allowlist',
      'k.disabled',
      'k.expires_at as key_expires_at',
      'm.status as merchant_status',
      'k.token_generation',
    ])
    .where('k.client_id', '=', clientId)
    .executeTakeFirst();
  return row as VerifiedKey | undefined;
}

/**
 * Stores a token (by its hash) and the merchant principal, in one transaction. Stamped with the
 * generation read with the credentials: a stop committed meanwhile kills it.
 */
export async function insertToken(
  db: Kysely<Database>,
  key: Pick<VerifiedKey, 'merchant_id' | 'environment' | 'key_id' | 'token_generation'>,
  tokenHash: string,
  expiresAt: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('merchant_principals')
      .values({ merchant_id: key.merchant_id, environment: key.environment })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx
      .insertInto('access_tokens')
      .values({
        token_hash: tokenHash,
        key_id: key.key_id,
        expires_at: expiresAt,
        key_generation: key.token_generation,
      })
      .execute();
  });
}
