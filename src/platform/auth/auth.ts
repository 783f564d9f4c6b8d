import type { Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { ApiError } from '../errors.js';
import { sha256Hex } from '../ids.js';
import { isAllowed } from '../http/ip-allowlist.js';
import type { AuthContext } from '../http/request-context.js';
import type { AuthCache, TokenState } from './auth-cache.js';
import { deleteExpiredTokens, selectTokenRow } from '../queries/auth.js';

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

export interface Authenticated extends AuthContext {
  ipAllowlist: string;
}

/**
 * Resolves a token to its key and merchant: from the process's cache (auth-cache.ts: emptied by
 * the database's notification of any change to keys, merchants and tokens, and bypassed while that
 * notification connection is down), else in one statement. The key's state is checked on every
 * request, so disabling, expiry, rotation and added scopes take effect at once, and a token issued
 * before the key's last stop (an older token generation) is unknown.
 */
export async function authenticate(
  db: Kysely<Database>,
  cache: AuthCache,
  token: string | undefined,
  environment: Environment,
  nowMs: number,
): Promise<Authenticated> {
  if (!token) throw new ApiError('invalid_token');
  const tokenHash = sha256Hex(token);
  let state = cache.get(tokenHash);
  if (!state) {
    const generation = cache.begin();
    state = await readTokenState(db, tokenHash);
    if (!state) throw new ApiError('invalid_token');
    cache.put(tokenHash, state, generation);
  }
  return checked(state, environment, nowMs);
}

/**
 * `authenticate` from the process's cache alone, without a promise: the token's state when held
 * (checked exactly as `authenticate` checks it; its refusals thrown), undefined when the state
 * must be read.
 */
export function authenticateHeld(
  cache: AuthCache,
  token: string | undefined,
  environment: Environment,
  nowMs: number,
): Authenticated | undefined {
  if (!token) throw new ApiError('invalid_token');
  const state = cache.get(sha256Hex(token));
  if (!state) return undefined;
  return checked(state, environment, nowMs);
}

function checked(state: TokenState, environment: Environment, nowMs: number): Authenticated {
  if (
    state.tokenExpiresAt <= nowMs ||
    !keyUsable(
      { disabled: state.disabled, key_expires_at: state.keyExpiresAt === null ? null : new Date(state.keyExpiresAt) },
      new Date(nowMs),
    )
  ) {
    throw new ApiError('invalid_token');
  }
  if (state.environment !== environment) throw new ApiError('environment_mismatch');
  return {
    merchantId: state.merchantId,
    environment: state.environment,
    keyId: state.keyId,
    scopes: state.scopes,
    signingKey: state.signingKey,
    merchantStatus: state.merchantStatus,
    ipAllowlist: state.ipAllowlist,
  };
}

async function readTokenState(db: Kysely<Database>, tokenHash: string): Promise<TokenState | undefined> {
  const row = await selectTokenRow(db, tokenHash);
  if (!row) return undefined;
  return {
    tokenExpiresAt: new Date(row.token_expires_at).getTime(),
    keyId: row.key_id,
    merchantId: row.merchant_id,
    environment: row.environment,
    signingKey: row.signing_key,
    scopes: row.scopes,
    ipAllowlist: row.ip_allowlist,
    disabled: row.disabled,
    keyExpiresAt: row.key_expires_at ? new Date(row.key_expires_at).getTime() : null,
    merchantStatus: row.merchant_status,
  };
}

export async function purgeExpiredTokens(db: Kysely<Database>): Promise<void> {
  await deleteExpiredTokens(db);
}
