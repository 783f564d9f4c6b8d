import { createHmac, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../ids.js';

export const timestampToleranceSeconds = 300;
export const nonceWindowSeconds = 300;
/**
 * The reference gives no nonce format beyond "fresh per request". We accept 1 to 128 visible ASCII
 * characters (a UUID is 36): the nonce is stored and indexed, so it needs a bound.
 */
export const nonceLengthMax = 128;
const noncePattern = new RegExp(`^[\\x21-\\x7e]{1,${nonceLengthMax}}$`);

export interface SigningInput {
  method: string;
  pathWithQuery: string;
  timestamp: string;
  nonce: string;
  rawBody: Buffer;
}

export function signingString(input: SigningInput): string {
  const bodyHash = sha256Hex(input.rawBody);
  return [input.method.toUpperCase(), input.pathWithQuery, input.timestamp, input.nonce, bodyHash].join('\n');
}

export function computeSignature(signingKey: string, input: SigningInput): string {
  return createHmac('sha256', signingKey).update(signingString(input)).digest('base64');
}

export type SignatureCheck =
  | { ok: true; nonce: string; timestampSeconds: number }
  | { ok: false; code: 'invalid_signature' | 'timestamp_out_of_range' };

/** Pure check of headers and signature; the nonce is consumed by the caller only after `ok`. */
export function verifySignature(
  signingKey: string,
  input: Omit<SigningInput, 'timestamp' | 'nonce'> & { timestamp?: string; nonce?: string; signature?: string },
  nowSeconds: number,
): SignatureCheck {
  const { timestamp, nonce, signature } = input;
  if (!timestamp || !nonce || !signature) return { ok: false, code: 'invalid_signature' };
  // Malformed signing headers are invalid_signature, as the reference says of a non-numeric timestamp.
  if (!/^\d{1,16}$/.test(timestamp) || !noncePattern.test(nonce)) return { ok: false, code: 'invalid_signature' };
  if (Math.abs(nowSeconds - Number(timestamp)) > timestampToleranceSeconds)
    return { ok: false, code: 'timestamp_out_of_range' };
  const expected = Buffer.from(computeSignature(signingKey, { ...input, timestamp, nonce }), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, code: 'invalid_signature' };
  return { ok: true, nonce, timestampSeconds: Number(timestamp) };
}
