import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../platform/ids.js';

/**
 * The device cookie of the sign-in throttle (OWASP's "device cookies"): after a complete sign-in
 * the browser gets a random value signed together with the account's e-mail address. An attempt
 * that brings a valid one for the account it names is from a browser the person used before, and
 * is throttled on that browser's failures alone (rules.ts#loginAllowed): a stranger, who cannot
 * make the signature, cannot spend that budget. It grants nothing else; the password and the
 * second factor are asked as always. The failures table keeps only its hash. Pure functions.
 */

export const deviceCookieName = 'mwa_console_device';
/** A year: the browser stays known between sign-ins, as long as it keeps the cookie. */
export const deviceCookieSeconds = 365 * 24 * 3600;
const shape = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

const mac = (key: Buffer, email: string, nonce: string) =>
  createHmac('sha256', key).update(`device\n${email}\n${nonce}`).digest('base64url');

/** A new cookie value for a browser that just signed in to the account of `email`. */
export function newDeviceValue(key: Buffer, email: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${mac(key, email, nonce)}`;
}

/** The device's id (a hash of the cookie) when the cookie is valid for this account's e-mail address. */
export function deviceIdFor(key: Buffer, email: string, value: string | undefined): string | undefined {
  const m = value === undefined ? null : shape.exec(value);
  if (!m) return undefined;
  const expected = Buffer.from(mac(key, email, m[1]!));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given) ? sha256Hex(value!) : undefined;
}
