/**
 * Verification of incoming webhook requests (Standard Webhooks, extensions §5).
 *
 *   webhook-signature: v1,<base64(HMAC-SHA256(base64decode(secret without "whsec_"), `${id}.${timestamp}.${body}`))>
 *
 * The header may hold several space-separated signatures (e.g. during secret rotation); one
 * match is enough. Comparison is constant-time.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';
import { MerchantWalletSignatureVerificationError } from './errors.js';
import type { WebhookEvent } from './webhook-types.js';

export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export interface VerifyWebhookSignatureInput {
  /** The endpoint secret, `whsec_<base64>`. */
  secret: string;
  /** Request headers; `webhook-id`, `webhook-timestamp`, `webhook-signature` (any letter case). */
  headers: WebhookHeaders;
  /** The raw request body exactly as received (do not re-serialise parsed JSON). */
  body: string | Buffer;
  /** Allowed distance between `webhook-timestamp` and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Current time in Unix seconds (a value above 1e12 is taken as milliseconds). Default: the clock. */
  now?: number;
}

function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(name: string): string | null }).get(name);
    return v ?? undefined;
  }
  const rec = headers as Record<string, string | string[] | undefined>;
  let v = rec[name];
  if (v === undefined) {
    const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
    if (key !== undefined) v = rec[key];
  }
  if (Array.isArray(v)) return v.join(' ');
  return v;
}

function decodeSecret(secret: string): Buffer | undefined {
  const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (b64.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64)) return undefined;
  const key = Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length > 0 ? key : undefined;
}

/** Computes the `v1,<base64>` signature of a webhook (exported for tests and tooling). */
export function signWebhook(input: {
  secret: string;
  id: string;
  timestamp: number | string;
  body: string | Buffer;
}): string {
  const key = decodeSecret(input.secret);
  if (!key) throw new TypeError('invalid webhook secret');
  const mac = createHmac('sha256', key)
    .update(`${input.id}.${input.timestamp}.`, 'utf8')
    .update(typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body)
    .digest('base64');
  return `v1,${mac}`;
}

export type WebhookVerificationFailure =
  | 'webhook_headers_missing'
  | 'webhook_timestamp_invalid'
  | 'webhook_timestamp_out_of_range'
  | 'webhook_secret_invalid'
  | 'webhook_signature_mismatch';

const failureMessages: Record<WebhookVerificationFailure, string> = {
  webhook_headers_missing: 'webhook-id, webhook-timestamp and webhook-signature headers are required',
  webhook_timestamp_invalid: 'webhook-timestamp is not Unix seconds',
  webhook_timestamp_out_of_range:
    'webhook-timestamp is outside the tolerance (a stale or replayed request, or a skewed clock)',
  webhook_secret_invalid: 'the endpoint secret is not whsec_<base64>',
  webhook_signature_mismatch: 'no v1 signature in webhook-signature matches the body with this secret',
};

/** Why the request fails verification, or undefined when it passes. */
function checkWebhook(input: VerifyWebhookSignatureInput): WebhookVerificationFailure | undefined {
  const id = readHeader(input.headers, 'webhook-id');
  const ts = readHeader(input.headers, 'webhook-timestamp')?.trim();
  const sigHeader = readHeader(input.headers, 'webhook-signature');
  if (!id || !ts || !sigHeader) return 'webhook_headers_missing';
  if (!/^\d+$/.test(ts)) return 'webhook_timestamp_invalid';
  const timestamp = Number(ts);

  const tolerance = input.toleranceSeconds ?? 300;
  let nowSec = input.now ?? Date.now() / 1000;
  if (nowSec > 1e12) nowSec = nowSec / 1000;
  if (Math.abs(nowSec - timestamp) > tolerance) return 'webhook_timestamp_out_of_range';

  const key = decodeSecret(input.secret);
  if (!key) return 'webhook_secret_invalid';
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const expected = createHmac('sha256', key).update(`${id}.${ts}.`, 'utf8').update(body).digest('base64');
  const expectedBytes = Buffer.from(expected, 'utf8');

  let ok = false;
  for (const part of sigHeader.split(' ')) {
    if (part === '') continue;
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(part.slice(comma + 1), 'utf8');
    // Constant-time compare; keep looping so timing does not reveal which entry matched.
    if (given.length === expectedBytes.length && timingSafeEqual(given, expectedBytes)) ok = true;
  }
  return ok ? undefined : 'webhook_signature_mismatch';
}

/** True when one of the signatures matches and the timestamp lies within the tolerance. Never throws. */
export function verifyWebhookSignature(input: VerifyWebhookSignatureInput): boolean {
  try {
    return checkWebhook(input) === undefined;
  } catch {
    return false;
  }
}

export interface ConstructEventOptions {
  /** Allowed distance between `webhook-timestamp` and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Current time in Unix seconds (a value above 1e12 is taken as milliseconds). Default: the clock. */
  now?: number;
}

/**
 * Verifies a webhook request and returns its event, as stripe-node's `webhooks.constructEvent`:
 * `body` is the raw request body exactly as received (a string, Buffer or Uint8Array; never
 * parsed and re-serialised JSON), `headers` the request's headers, `secret` the endpoint's
 * `whsec_...` secret. Throws `MerchantWalletSignatureVerificationError` when the headers are
 * missing, the timestamp is further than `toleranceSeconds` from now (a stale or replayed
 * request), no signature matches, or the body is not a JSON event.
 */
export function constructEvent(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: ConstructEventOptions = {},
): WebhookEvent {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError(
      'constructEvent: body must be the raw request body (string, Buffer or Uint8Array), not parsed JSON',
    );
  }
  const bytes =
    typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const failure = checkWebhook({
    secret,
    headers,
    body: bytes,
    toleranceSeconds: options.toleranceSeconds,
    now: options.now,
  });
  if (failure) throw new MerchantWalletSignatureVerificationError(failure, failureMessages[failure]);
  let event: unknown;
  try {
    event = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new MerchantWalletSignatureVerificationError('webhook_body_invalid', 'the signed body is not JSON', err);
  }
  if (
    typeof event !== 'object' ||
    event === null ||
    typeof (event as { event_type?: unknown }).event_type !== 'string'
  ) {
    throw new MerchantWalletSignatureVerificationError(
      'webhook_body_invalid',
      'the signed body is not a webhook event',
    );
  }
  return event as WebhookEvent;
}

/** Webhook helpers in one object, as stripe-node's `stripe.webhooks`. */
export const webhooks = {
  constructEvent,
  verifySignature: verifyWebhookSignature,
  sign: signWebhook,
} as const;
