import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { ApiError } from './errors.js';
import { randomToken, sha256Hex } from './ids.js';
import { isAllowed } from './ip-allowlist.js';
import type { AuthContext } from './request-context.js';

export interface TokenExchangeResult {
  auth_token: string;
  expired_at: number;
  token_type: 'Bearer';
  scopes: string[];
}

interface KeyRow {
  key_id: string;
  merchant_id: string;
  environment: Environment;
  api_key_hash: string;
  signing_key: string;
  scopes: string[];
  ip_allowlist: string;
  disabled: boolean;
  key_expires_at: Date | null;
  merchant_status: string;
}

export function keyUsable(row: Pick<KeyRow, 'disabled' | 'key_expires_at'>, now: Date): boolean {
  return !row.disabled && (row.key_expires_at === null || row.key_expires_at.getTime() > now.getTime());
}

/** Production keys always carry an allow-list; an empty one admits nobody. */
export function checkIp(environment: Environment, allowlist: string, clientIp: string): void {
  if (environment === 'production' && !isAllowed(allowlist, clientIp)) throw new ApiError('ip_not_allowed');
}

/** Merchant status gates: suspended keeps reads; frozen, closed and unknown states refuse everything. */
export function checkMerchantStatus(status: string, isRead: boolean): void {
  if (status === 'active') return;
  if (status === 'suspended' && isRead) return;
  throw new ApiError('merchant_disabled');
}

export async function exchangeToken(
  db: Kysely<Database>,
  input: { clientId: string | undefined; apiKey: string | undefined; environment: Environment; clientIp: string; ttlSeconds: number },
): Promise<{ result: TokenExchangeResult; merchantId: string; keyId: string }> {
  if (!input.clientId || !input.apiKey) throw new ApiError('invalid_credentials');
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('merchants as m', 'm.id', 'k.merchant_id')
    .select([
      'k.id as key_id', 'k.merchant_id', 'k.environment', 'k.api_key_hash', 'k.signing_key', 'k.scopes',
      'k.ip_allowlist', 'k.disabled', 'k.expires_at as key_expires_at', 'm.status as merchant_status',
    ])
    .where('k.client_id', '=', input.clientId)
    .executeTakeFirst();
  const now = new Date();
  if (!row || row.api_key_hash !== sha256Hex(input.apiKey) || !keyUsable(row as KeyRow, now)) {
    throw new ApiError('invalid_credentials');
  }
  if (row.environment !== input.environment) throw new ApiError('environment_mismatch');
  checkIp(row.environment, row.ip_allowlist, input.clientIp);
  checkMerchantStatus(row.merchant_status, true);

  const token = `mwt_${randomToken(32)}`;
  const expiresAt = new Date(now.getTime() + input.ttlSeconds * 1000);
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('merchant_principals')
      .values({ merchant_id: row.merchant_id, environment: row.environment })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx.insertInto('access_tokens').values({ token_hash: sha256Hex(token), key_id: row.key_id, expires_at: expiresAt }).execute();
  });
  return {
    merchantId: row.merchant_id,
    keyId: row.key_id,
    result: { auth_token: token, expired_at: Math.floor(expiresAt.getTime() / 1000), token_type: 'Bearer', scopes: row.scopes },
  };
}

export function bearerFrom(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['x-auth-token'] ?? headers['authorization'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(value);
  return m ? m[1] : undefined;
}

/**
 * Resolves a token to its key and merchant with one query. The key's state is read on every
 * request, so disabling, expiry, rotation and added scopes take effect at once.
 */
export async function authenticate(
  db: Kysely<Database>,
  token: string | undefined,
  environment: Environment,
): Promise<AuthContext & { ipAllowlist: string }> {
  if (!token) throw new ApiError('invalid_token');
  const row = await db
    .selectFrom('access_tokens as t')
    .innerJoin('api_keys as k', 'k.id', 't.key_id')
    .innerJoin('merchants as m', 'm.id', 'k.merchant_id')
    .select([
      't.expires_at as token_expires_at', 'k.id as key_id', 'k.merchant_id', 'k.environment', 'k.signing_key',
      'k.scopes', 'k.ip_allowlist', 'k.disabled', 'k.expires_at as key_expires_at', 'm.status as merchant_status',
    ])
    .where('t.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  const now = new Date();
  if (!row || new Date(row.token_expires_at).getTime() <= now.getTime() || !keyUsable(row as unknown as KeyRow, now)) {
    throw new ApiError('invalid_token');
  }
  if (row.environment !== environment) throw new ApiError('environment_mismatch');
  return {
    merchantId: row.merchant_id,
    environment: row.environment,
    keyId: row.key_id,
    scopes: row.scopes,
    signingKey: row.signing_key,
    merchantStatus: row.merchant_status,
    ipAllowlist: row.ip_allowlist,
  };
}

export async function purgeExpiredTokens(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('access_tokens').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
}
