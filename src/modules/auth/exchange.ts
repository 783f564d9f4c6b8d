import type { Environment } from '../../db/schema.js';
import type { ErrorCode } from '../../platform/errors.js';
import type { ServiceContext } from '../../service-context.js';
import { issueToken, verifyCredentials, type TokenExchangeResult } from '../../platform/auth.js';
import { consume, refund, sourceSubject } from '../../platform/rate-limit.js';
import { rateLimitsPerMinute } from '../../platform/route-access.js';

/** The codes a token exchange can answer: its route declares this list. */
export const exchangeErrors = ['invalid_credentials', 'environment_mismatch', 'ip_not_allowed', 'merchant_disabled', 'rate_limited'] as const satisfies readonly ErrorCode[];

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
  const attempt = await consume(ctx.db, `ip:${sourceSubject(input.clientIp)}`, 'token_exchange_failures', exchangeFailuresPerMinute * scale);
  const now = new Date();
  const key = await verifyCredentials(ctx.db, input.clientId, input.apiKey, now);
  await refund(ctx.db, attempt);
  await consume(ctx.db, `key:${key.key_id}`, 'token_exchange', rateLimitsPerMinute.token_exchange * scale);
  return issueToken(ctx.db, key, { environment: input.environment, clientIp: input.clientIp, ttlSeconds: ctx.tokenTtlSeconds, now });
}
