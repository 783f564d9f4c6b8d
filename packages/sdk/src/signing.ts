/**
 * Request signing (reference: Authentication > Signing).
 *
 * signing string = METHOD \n pathWithQuery \n x-timestamp \n x-nonce \n lowerHex(SHA-256(raw body bytes))
 * x-signature    = Base64(HMAC-SHA256(signing_key, signing string))
 */

import { createHash, createHmac } from 'node:crypto';

export type BodyBytes = Buffer | Uint8Array | string;

export interface SignRequestInput {
  /** HTTP method; upper-cased before signing. */
  method: string;
  /** Path including the query string, character for character as put on the request line. */
  pathWithQuery: string;
  /** Value of the `x-timestamp` header (Unix seconds). */
  timestamp: number | string;
  /** Value of the `x-nonce` header. */
  nonce: string;
  /** The exact body bytes sent (empty for no body). A string is taken as UTF-8. */
  rawBody?: BodyBytes;
  /** The key's `signing_key` value. */
  signingKey: string;
}

/** Methods that are never signed. */
export function isSignedMethod(method: string): boolean {
  const m = method.toUpperCase();
  return m !== 'GET' && m !== 'HEAD';
}

export function sha256Hex(body: BodyBytes | undefined): string {
  const hash = createHash('sha256');
  if (body !== undefined) hash.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return hash.digest('hex');
}

/** The exact string that is HMAC'ed (exported for debugging and docs). */
export function buildSigningString(input: Omit<SignRequestInput, 'signingKey'>): string {
  return [
    input.method.toUpperCase(),
    input.pathWithQuery,
    String(input.timestamp),
    input.nonce,
    sha256Hex(input.rawBody),
  ].join('\n');
}

/** Computes the `x-signature` header value (44 characters of Base64). */
export function signRequest(input: SignRequestInput): string {
  return createHmac('sha256', input.signingKey).update(buildSigningString(input), 'utf8').digest('base64');
}
