import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * CSRF protection of every hosted form: a signed double submit. The page sets a random cookie
 * (HttpOnly, SameSite, path `/hosted/`) and puts HMAC(key, ticket id + cookie) in a hidden field;
 * a POST is accepted only when its field equals the HMAC of its own cookie and ticket. Another
 * site can make a browser send the cookie (not under SameSite=Strict) but cannot read it or the
 * page, so it cannot produce the field; a token taken from one ticket's page is worthless for
 * another ticket. The key is derived from HOSTED_SCREEN_KEY (platform/auth/keys.ts). Pure functions.
 */

export const csrfCookieName = 'mwa_hosted_csrf';
const cookieShape = /^[A-Za-z0-9_-]{43}$/;
/** The cookie lives as long as the longest screen ticket (24 hours). */
export const csrfCookieMaxAgeSeconds = 24 * 3600;

export function newCsrfCookieValue(): string {
  return randomBytes(32).toString('base64url');
}

export function isCsrfCookieValue(value: string | undefined): value is string {
  return value !== undefined && cookieShape.test(value);
}

/** The hidden field's value for this ticket and cookie. */
export function csrfToken(key: Buffer, ticketId: string, cookie: string): string {
  return createHmac('sha256', key).update(`${ticketId}\n${cookie}`).digest('base64url');
}

/** Whether a submitted field matches the cookie sent with it, for this ticket (constant time). */
export function verifyCsrf(
  key: Buffer,
  ticketId: string,
  cookie: string | undefined,
  field: string | undefined,
): boolean {
  if (!isCsrfCookieValue(cookie) || typeof field !== 'string' || field.length !== 43) return false;
  const expected = Buffer.from(csrfToken(key, ticketId, cookie));
  const given = Buffer.from(field);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** One cookie's value from a Cookie header (the first of that name). */
export function cookieFrom(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie value. `SameSite=Strict` by default. A page the merchant embeds in its own site
 * (frame-ancestors configured) is a cross-site frame, where browsers neither send nor store a
 * Strict cookie; over HTTPS it gets `SameSite=None; Secure; Partitioned` instead (the cookie is
 * kept for that embedding site only), and the double submit still protects the form.
 */
export function csrfSetCookie(value: string, opts: { secure: boolean; embeddable: boolean }): string {
  const parts = [`${csrfCookieName}=${value}`, 'Path=/hosted/', `Max-Age=${csrfCookieMaxAgeSeconds}`, 'HttpOnly'];
  if (opts.secure && opts.embeddable) parts.push('Secure', 'SameSite=None', 'Partitioned');
  else parts.push(...(opts.secure ? ['Secure'] : []), 'SameSite=Strict');
  return parts.join('; ');
}
