import { sql, type Kysely } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { ApiError } from './errors.js';
import { sha256Hex } from './ids.js';
import { isAllowed } from './ip-allowlist.js';
import type { AuthContext } from './request-context.js';

/** A key is usable while it is enabled and not past its expiry. */
export function keyUsable(row: { disabled: boolean; key_expires_at: Date | null }, now: Date): boolean {
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

export function bearerFrom(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['x-auth-token'] ?? headers['authorization'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(value);
  return m ? m[1] : undefined;
}

export interface RequestHit {
  bucket: string;
  windowStart: number;
}

export interface Authenticated extends AuthContext {
  ipAllowlist: string;
  /** The request's hit in its rate window, counted in the same statement as the token lookup. */
  hits: { subject: string; current: number; previous: number };
}

/**
 * Resolves a token to its key and merchant and counts the request in its rate window, in one
 * statement: the hot path of every authenticated request is one round trip. The key's state is
 * read on every request, so disabling, expiry, rotation and added scopes take effect at once, and
 * a token issued before the key's last stop (an older token generation) is unknown. A hit is
 * counted only for a usable token of this environment.
 */
export async function authenticate(
  db: Kysely<Database>,
  token: string | undefined,
  environment: Environment,
  hit: RequestHit,
): Promise<Authenticated> {
  if (!token) throw new ApiError('invalid_token');
  const { rows } = await sql<{
    token_expires_at: Date; key_id: string; merchant_id: string; environment: Environment; signing_key: string; scopes: string[];
    ip_allowlist: string; disabled: boolean; key_expires_at: Date | null; merchant_status: string; current_hits: number | null; previous_hits: number | null;
  }>`
    WITH auth AS (
      SELECT t.expires_at AS token_expires_at, k.id AS key_id, k.merchant_id, k.environment, k.signing_key, k.scopes,
             k.ip_allowlist, k.disabled, k.expires_at AS key_expires_at, m.status AS merchant_status,
             k.merchant_id || ':' || k.environment AS subject
      FROM access_tokens t
      JOIN api_keys k ON k.id = t.key_id AND k.token_generation = t.key_generation
      JOIN merchants m ON m.id = k.merchant_id
      WHERE t.token_hash = ${sha256Hex(token)}
    ), hit AS (
      INSERT INTO rate_limit_windows (subject, bucket, window_start, hits)
      SELECT subject, ${hit.bucket}, ${hit.windowStart}, 1 FROM auth
      WHERE auth.token_expires_at > now() AND NOT auth.disabled
        AND (auth.key_expires_at IS NULL OR auth.key_expires_at > now()) AND auth.environment = ${environment}
      ON CONFLICT (subject, bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
      RETURNING hits
    )
    SELECT auth.*, (SELECT hits FROM hit) AS current_hits,
           (SELECT w.hits FROM rate_limit_windows w
             WHERE w.subject = auth.subject AND w.bucket = ${hit.bucket} AND w.window_start = ${hit.windowStart - 1}) AS previous_hits
    FROM auth
  `.execute(db);
  const row = rows[0];
  const now = new Date();
  if (!row || new Date(row.token_expires_at).getTime() <= now.getTime() || !keyUsable({ disabled: row.disabled, key_expires_at: row.key_expires_at ? new Date(row.key_expires_at) : null }, now)) {
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
    hits: { subject: `${row.merchant_id}:${row.environment}`, current: Number(row.current_hits ?? 0), previous: Number(row.previous_hits ?? 0) },
  };
}

export async function purgeExpiredTokens(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('access_tokens').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
}
