import { createHmac, randomBytes } from 'node:crypto';
import { eventBody, type StoredEvent } from '../../events/index.js';

/**
 * Standard Webhooks signing (pure apart from the secret generator), byte-compatible with the
 * `standardwebhooks` package (test/webhooks.test.ts checks both ways):
 *
 *   webhook-signature: v1,<base64(HMAC-SHA256(base64decode(secret without "whsec_"), "{id}.{timestamp}.{body}"))>
 *
 * Several signatures (a secret roll) are separated by single spaces.
 */

export const secretPrefix = 'whsec_';
export const secretBytes = 32;

/** `whsec_<base64 of 32 random bytes>`. */
export function newSecret(): string {
  return `${secretPrefix}${randomBytes(secretBytes).toString('base64')}`;
}

function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw new TypeError('webhook secret is empty');
  return key;
}

/** `v1,<base64>` for one secret. */
export function sign(secret: string, id: string, timestamp: number, body: Buffer | string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('base64');
  return `v1,${mac}`;
}

/** The header value: one signature per secret, newest first, space separated. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: Buffer | string,
): string {
  if (secrets.length === 0) throw new TypeError('no secret to sign with');
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
export function signingSecrets(
  endpoint: { secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null },
  now: Date,
): string[] {
  const secrets = [endpoint.secret];
  if (
    endpoint.previous_secret &&
    endpoint.previous_secret_expires_at &&
    endpoint.previous_secret_expires_at.getTime() > now.getTime()
  ) {
    secrets.push(endpoint.previous_secret);
  }
  return secrets;
}

/** The event a delivery sends: the outbox row, as the events API reads it too. */
export type EnvelopeEvent = StoredEvent;

/**
 * The request body: the reference's envelope, ids and status only (no amounts, assets or other
 * details), serialised once so that the bytes signed are the bytes sent.
 */
export function envelope(ev: EnvelopeEvent): string {
  return JSON.stringify(eventBody(ev));
}
