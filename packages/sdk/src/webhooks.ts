/**
 * Verification of incoming webhook requests (Standard Webhooks, extensions §5).
 *
 *   webhook-signature: v1,<base64(HMAC-SHA256(base64decode(secret without "whsec_"), `${id}.${timestamp}.${body}`))>
 *
 * The header may hold several space-separated signatures (e.g. during secret rotation); one
 * match is enough. Comparison is constant-time.
 */

import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookHeaders =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

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
export function signWebhook(input: { secret: string; id: string; timestamp: number | string; body: string | Buffer }): string {
  const key = decodeSecret(input.secret);
  if (!key) throw new TypeError('invalid webhook secret');
  const mac = createHmac('sha256', key)
    .update(`${input.id}.${input.timestamp}.`, 'utf8')
    .update(typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body)
    .digest('base64');
  return `v1,${mac}`;
}

/** True when one of the signatures matches and the timestamp lies within the tolerance. Never throws. */
export function verifyWebhookSignature(input: VerifyWebhookSignatureInput): boolean {
  try {
    const id = readHeader(input.headers, 'webhook-id');
    const ts = readHeader(input.headers, 'webhook-timestamp');
    const sigHeader = readHeader(input.headers, 'webhook-signature');
    if (!id || !ts || !sigHeader) return false;
    if (!/^\d+$/.test(ts.trim())) return false;
    const timestamp = Number(ts.trim());

    const tolerance = input.toleranceSeconds ?? 300;
    let nowSec = input.now ?? Date.now() / 1000;
    if (nowSec > 1e12) nowSec = nowSec / 1000;
    if (Math.abs(nowSec - timestamp) > tolerance) return false;

    const key = decodeSecret(input.secret);
    if (!key) return false;
    const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
    const expected = createHmac('sha256', key).update(`${id}.${ts.trim()}.`, 'utf8').update(body).digest('base64');
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
    return ok;
  } catch {
    return false;
  }
}
