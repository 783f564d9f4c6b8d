import type { Environment } from '../../db/columns.js';

/**
 * The headers of every hosted response, and the rule for the origins a merchant may allow to frame
 * its screens. Pure functions (docs/hosted-screens.md, "Security headers").
 */

/** At most this many origins may frame a merchant's screens. */
export const frameAncestorsMax = 10;

const hostLabel = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const dnsName = new RegExp(`^(\\*\\.)?(${hostLabel}\\.)*${hostLabel}$`);
const loopbackHosts = /^(localhost|127\.0\.0\.1|\[::1\]|(\*\.)?([a-z0-9-]+\.)*localhost)$/;

export type FrameAncestorProblem = 'not_an_origin' | 'https_required' | 'too_many';

/**
 * One allowed framing origin, normalised (lower case, no default port), or the reason it is refused.
 * Allowed: `https://host[:port]`, where host may start with `*.` (any subdomain). In the sandbox
 * also `http://` for loopback hosts (`localhost`, `*.localhost`, `127.0.0.1`, `[::1]`), for local
 * development. No path, query, fragment, user or bare wildcard: a CSP source that broad would let
 * any site frame the screens.
 */
export function normaliseFrameAncestor(
  value: string,
  environment: Environment,
): { origin: string } | { problem: FrameAncestorProblem } {
  const m = /^(https?):\/\/([^/?#@\s:]+|\[::1\])(?::([0-9]{1,5}))?$/i.exec(value.trim());
  if (!m) return { problem: 'not_an_origin' };
  const scheme = m[1]!.toLowerCase();
  const host = m[2]!.toLowerCase();
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65_535)) return { problem: 'not_an_origin' };
  if (!dnsName.test(host) && host !== '[::1]' && host !== '127.0.0.1') return { problem: 'not_an_origin' };
  if (scheme === 'http' && !(environment === 'sandbox' && loopbackHosts.test(host)))
    return { problem: 'https_required' };
  const defaultPort = scheme === 'https' ? 443 : 80;
  return { origin: `${scheme}://${host}${port === undefined || port === defaultPort ? '' : `:${port}`}` };
}

/**
 * A whole list: normalised origins, or each refused entry with its index. Entries that normalise
 * to the same origin (`HTTPS://Shop.Example:443`, `https://shop.example`) are one: the later ones
 * are dropped, as documented, not refused.
 */
export function normaliseFrameAncestors(
  values: readonly string[],
  environment: Environment,
): { origins: string[] } | { problems: { index: number; problem: FrameAncestorProblem }[] } {
  if (values.length > frameAncestorsMax) return { problems: [{ index: frameAncestorsMax, problem: 'too_many' }] };
  const origins: string[] = [];
  const problems: { index: number; problem: FrameAncestorProblem }[] = [];
  values.forEach((value, index) => {
    const r = normaliseFrameAncestor(value, environment);
    if ('problem' in r) problems.push({ index, problem: r.problem });
    else if (!origins.includes(r.origin)) origins.push(r.origin);
  });
  return problems.length > 0 ? { problems } : { origins };
}

/**
 * The Content-Security-Policy of a hosted page: nothing but our own stylesheet and images (and
 * `data:` images), no script at all, forms only to ourselves, no <base>, and framing only by the
 * merchant's origins ('none' when it has none).
 */
export function contentSecurityPolicy(frameAncestors: readonly string[]): string {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** Every hosted response carries these (pages, the stylesheet, refusals). */
export function hostedSecurityHeaders(frameAncestors: readonly string[]): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'content-security-policy': contentSecurityPolicy(frameAncestors),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // Older browsers that ignore frame-ancestors: deny framing unless the merchant allows some origin.
    ...(frameAncestors.length === 0 ? { 'x-frame-options': 'DENY' } : {}),
  };
}
