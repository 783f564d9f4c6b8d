import type { Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { ErrorCode } from '../../platform/errors.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { checkIp, checkMerchantStatus, keyUsable } from '../../platform/auth/auth.js';
import { randomToken, sha256Hex } from '../../platform/ids.js';
import { consume, refund, sourceSubject } from '../../platform/auth/rate-limit.js';
import { rateLimitsPerMinute } from '../../platform/routes/route-access.js';
import { findKeyByClientId, insertToken, type VerifiedKey } from './queries.js';

export interface TokenExchangeResult {
  auth_token: string;
  expired_at: number;
  token_type: 'Bearer';
  scopes: string[];
}

/** The codes a token exchange can answer: its route declares this list. */
export const exchangeErrors = [
  'invalid_credentials',
  'environment_mismatch',
  'ip_not_allowed',
  'merchant_disabled',
  'rate_limited',
] as const satisfies readonly ErrorCode[];
/** Failed exchanges one source address may make a minute; the reference's exchange limit. */
export const exchangeFailuresPerMinute = 20;

/**
 * A token exchange under its two limits (docs/rate-limits.md):
 *
 * - failures per source address (an IPv4 address, an IPv6 /64): every attempt is counted before
 *   the credentials are looked at, and taken back once they prove a key. A source over its budget
 *   cannot try more, whatever client id it presents, and a random or missing client id creates no
 *   row of its own.
 * - exchanges per key (the reference's 20 a minute), counted once the credentials prove the key.
 *
 * Failures never count against the key: guessing at a known client id cannot lock its owner out.
 */
export async function exchangeWithLimits(
  ctx: ServiceContext,
  input: { clientId: string | undefined; apiKey: string | undefined; environment: Environment; clientIp: string },
): Promise<TokenExchangeResult> {
  const scale = ctx.config.rateLimitScale;
  // Real time: token expiry and rate windows are request-security windows, which the sandbox clock never moves
  // (extensions 8).
  const nowMs = ctx.requestClock();
  const now = new Date(nowMs);
  const attempt = await consume(
    ctx.db,
    `ip:${sourceSubject(input.clientIp)}`,
    'token_exchange_failures',
    exchangeFailuresPerMinute * scale,
    nowMs,
  );
  const key = await verifyCredentials(ctx.db, input.clientId, input.apiKey, now);
  await refund(ctx.db, attempt);
  await consume(ctx.db, `key:${key.key_id}`, 'token_exchange', rateLimitsPerMinute.token_exchange * scale, nowMs);
  return issueToken(ctx.db, key, {
    environment: input.environment,
    clientIp: input.clientIp,
    ttlSeconds: ctx.tokenTtlSeconds,
    now,
  });
}

/** Longer `x-client-id` or `x-api-key` values are refused without a lookup (ours are about 40 characters). */
export const credentialLengthMax = 256;

/**
 * The key that the exchange credentials prove, or `invalid_credentials`: headers missing or too
 * long, unknown client id, wrong api key, key disabled or expired. Says nothing about which.
 */
export async function verifyCredentials(
  db: Kysely<Database>,
  clientId: string | undefined,
  apiKey: string | undefined,
  now: Date,
): Promise<VerifiedKey> {
  if (!clientId || !apiKey || clientId.length > credentialLengthMax || apiKey.length > credentialLengthMax) {
    throw new ApiError('invalid_credentials');
  }
  const row = await findKeyByClientId(db, clientId);
  if (!row || row.api_key_hash !== sha256Hex(apiKey) || !keyUsable(row, now)) {
    throw new ApiError('invalid_credentials');
  }
  return row;
}

/** Issues a token for a verified key once the environment, the caller's address and the merchant pass. */
export async function issueToken(
  db: Kysely<Database>,
  key: VerifiedKey,
  input: { environment: Environment; clientIp: string; ttlSeconds: number; now: Date },
): Promise<TokenExchangeResult> {
  if (key.environment !== input.environment) throw new ApiError('environment_mismatch');
  checkIp(key.environment, key.ip_allowlist, input.clientIp);
  checkMerchantStatus(key.merchant_status, true);

  const token = `mwt_${randomToken(32)}`;
  const expiresAt = new Date(input.now.getTime() + input.ttlSeconds * 1000);
  await insertToken(db, key, sha256Hex(token), expiresAt);
  return {
    auth_token: token,
    expired_at: Math.floor(expiresAt.getTime() / 1000),
    token_type: 'Bearer',
    scopes: key.scopes,
  };
}
