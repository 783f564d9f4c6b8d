/**
 * Retry policy (reference: Errors > Retry rules, Idempotency).
 *
 * Retried with the same idempotency key (new nonce and timestamp per attempt):
 *   - HTTP 500, 502, 504 and codes api_error, upstream_error, upstream_timeout, idempotency_in_progress;
 *   - network failures (connection refused/reset, DNS hiccups, per-attempt timeout);
 *   - 429 rate_limited, after waiting Retry-After seconds (header, else `retry_after` in the body).
 * A write sent without an idempotency key (`idempotencyKey: false`) is retried only after 429
 * (refused before it ran): after a 5xx or a lost answer it may have run, and a second copy would
 * run again. A DELETE is the exception: naturally idempotent (the reference), it is retried like a
 * GET. (The client applies this; decideRetry only classifies the error.)
 * Never retried: any other 4xx (request_rejected, insufficient_scope, ip_not_allowed, merchant_disabled,
 * product_not_available, every 404, order_not_cancellable, state_invalid, invalid_signature, ...).
 * A code outside the reference's table is handled as api_error, as the reference says: retried
 * once with the same key, then reported (whatever its HTTP status).
 */

import type { ResolvedConfig } from './config.js';
import { headerValue, MerchantWalletAbortError, MerchantWalletConnectionError, MerchantWalletError } from './errors.js';

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([500, 502, 504]);
export const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'api_error',
  'upstream_error',
  'upstream_timeout',
  'idempotency_in_progress',
]);
/** Codes that are never retried, whatever the HTTP status says. */
export const NON_RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'request_rejected',
  'insufficient_scope',
  'ip_not_allowed',
  'merchant_disabled',
  'product_not_available',
  'order_not_cancellable',
  'state_invalid',
  'invalid_signature',
  'invalid_credentials',
  'environment_mismatch',
  'idempotency_key_reused',
]);
/** The codes of the reference's table (Errors > Codes). */
export const REFERENCE_CODES: ReadonlySet<string> = new Set([
  'invalid_credentials',
  'invalid_token',
  'invalid_signature',
  'signature_required',
  'timestamp_out_of_range',
  'nonce_reused',
  'environment_mismatch',
  'insufficient_scope',
  'ip_not_allowed',
  'merchant_disabled',
  'idempotency_key_required',
  'idempotency_key_invalid',
  'quote_lock_unsupported',
  'idempotency_key_reused',
  'idempotency_in_progress',
  'member_not_found',
  'member_context_required',
  'member_suspended',
  'kyc_required',
  'insufficient_balance',
  'merchant_insufficient_funds',
  'merchant_custody_shortfall',
  'product_not_available',
  'limit_exceeded',
  'amount_out_of_range',
  'request_rejected',
  'step_up_required',
  'order_not_cancellable',
  'asset_not_allowed',
  'invalid_request',
  'invalid_fields',
  'corridor_not_supported',
  'resource_not_found',
  'state_invalid',
  'duplicate_resource',
  'address_not_allowed',
  'qr_code_invalid',
  'not_found',
  'rate_limited',
  'api_error',
  'upstream_error',
  'upstream_timeout',
  'service_unavailable',
]);
export const RETRYABLE_NETWORK_ERRNOS: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
]);

export type RetryDecision =
  | { retry: false }
  | { retry: true; reason: 'rate_limited'; delayMs: number | undefined }
  | { retry: true; reason: 'in_progress' | 'server' | 'network' }
  /** A code outside the reference's table: handled as api_error, retried once (the client counts it). */
  | { retry: true; reason: 'unknown_code' };

export function decideRetry(err: unknown): RetryDecision {
  if (err instanceof MerchantWalletAbortError) return { retry: false };
  if (err instanceof MerchantWalletConnectionError) {
    return RETRYABLE_NETWORK_ERRNOS.has(err.errno) ? { retry: true, reason: 'network' } : { retry: false };
  }
  if (!(err instanceof MerchantWalletError)) return { retry: false };
  if (NON_RETRYABLE_CODES.has(err.code)) return { retry: false };
  if (err.status === 429 || err.code === 'rate_limited') {
    return { retry: true, reason: 'rate_limited', delayMs: retryAfterMs(err) };
  }
  if (!REFERENCE_CODES.has(err.code)) return { retry: true, reason: 'unknown_code' };
  if (err.status === 404) return { retry: false };
  if (err.code === 'idempotency_in_progress') return { retry: true, reason: 'in_progress' };
  if (RETRYABLE_STATUSES.has(err.status) || RETRYABLE_CODES.has(err.code)) return { retry: true, reason: 'server' };
  return { retry: false };
}

/** Parses a Retry-After value given in seconds (or as an HTTP date); returns milliseconds. */
export function parseRetryAfter(value: unknown, nowMs: number = Date.now()): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const s = value.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const date = Date.parse(s);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Wait requested by a 429: `Retry-After` header first, then `retry_after` in the (unwrapped) body. */
export function retryAfterMs(err: MerchantWalletError): number | undefined {
  return parseRetryAfter(headerValue(err.headers, 'retry-after')) ?? parseRetryAfter(err.body['retry_after']);
}

/** Exponential backoff with full jitter: random(0, min(max, base * 2^(retryIndex))). */
export function backoffDelayMs(
  retryIndex: number,
  cfg: Pick<ResolvedConfig, 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'random'>,
): number {
  const ceiling = Math.min(cfg.retryMaxDelayMs, cfg.retryBaseDelayMs * 2 ** retryIndex);
  return Math.floor(cfg.random() * ceiling);
}

/**
 * Delay before the next attempt. `retryIndex` is 0 before the second attempt.
 * idempotency_in_progress waits 1 to 2 seconds, then backs off as the reference advises ("wait 1
 * to 2 seconds, same key, backoff"): twice as long before each further attempt, capped by
 * retryMaxDelayMs.
 */
export function delayBeforeRetry(
  decision: Exclude<RetryDecision, { retry: false }>,
  retryIndex: number,
  cfg: ResolvedConfig,
): number {
  switch (decision.reason) {
    case 'rate_limited':
      return decision.delayMs ?? backoffDelayMs(retryIndex, cfg);
    case 'in_progress':
      return Math.min(cfg.retryMaxDelayMs, (1000 + Math.floor(cfg.random() * 1000)) * 2 ** retryIndex);
    default:
      return backoffDelayMs(retryIndex, cfg);
  }
}
