import type { ErrorCode } from '../errors.js';
import type { Scope } from '../auth/scopes.js';

export type RateBucket = 'deposits' | 'members_write' | 'orders' | 'reads';

/**
 * What a route needs from its caller. Every route declares one in `config.access`; a route without
 * a declaration is wired at registration to answer 403 (see http-app.ts).
 */
export interface RouteAccess {
  /** `public`: no token at all. `token`: any valid token, no scope. Otherwise the scope needed. */
  scope: Scope | 'public' | 'token';
  /** Who may call: the merchant itself, the merchant acting for a member, or either. */
  principal?: 'merchant' | 'member' | 'either';
  idempotency?: 'required' | 'optional' | 'none';
  /**
   * With `idempotency: 'optional'`: the bodies for which the key counts. For any other body the key
   * (its shape still checked) is not read: no replay, no 409, nothing stored. `POST
   * /v1/exchange/quotes`: the reference's key is "meaningful only with `lock: true`".
   */
  keyedBody?: { applies: (body: unknown) => boolean; description: string };
  /**
   * The body as the idempotency record compares it, where the reference makes two spellings one
   * request (`POST /v1/exchange/quotes`: "the same key, direction and amount return the same
   * locked quote", asset codes being case-insensitive and `250` the amount `250.000000` is).
   * Given any parsed body (it runs before validation), it must not throw. Default: the body.
   */
  canonicalBody?: (body: unknown) => unknown;
  /** `always`: signed whatever the method (POST /v1/deposits). Default: every method but GET and HEAD. */
  signature?: 'always' | 'by_method';
  /** Only in the sandbox; production answers 404 not_found. */
  sandboxOnly?: boolean;
  /**
   * Set by the route helper, never declared: `grouped` on a command whose plan is made from the
   * request alone (route.ts, `Command`), whose nonce and key's record its batch reads
   * (docs/group-commit.md).
   */
  commit?: 'grouped';
  /**
   * Top-level body fields that are secrets (a card PIN): the idempotency record's body hash covers
   * them only through a keyed HMAC, so the record cannot be used to guess them (idempotency.ts).
   */
  secretBodyFields?: readonly string[];
  /** Codes this route answers beyond the ones its access implies (auth, signing, idempotency, member, rate limit). */
  errors?: ErrorCode[];
}

/**
 * The signing rule, in one place (the pipeline's signature step and the OpenAPI document both
 * ask it): public routes are never signed; the others on every method but GET and HEAD, or on
 * every method when the route says `signature: 'always'`.
 */
export function isSignedRoute(method: string, access: RouteAccess): boolean {
  if (access.scope === 'public') return false;
  if (access.signature === 'always') return true;
  const m = method.toUpperCase();
  return m !== 'GET' && m !== 'HEAD';
}

/** The bucket of a method and a path (a route's pattern: `/v1/members/:id` is under /v1/members). */
export function rateBucketFor(method: string, path: string): RateBucket {
  if (method === 'GET' || method === 'HEAD') return 'reads';
  if (method === 'POST' && path === '/v1/deposits') return 'deposits';
  if (path === '/v1/members' || path.startsWith('/v1/members/')) return 'members_write';
  return 'orders';
}

/**
 * What the pipeline keys one method of a route by, worked out once when the route is registered.
 * Both come from the matched route, never from the raw URL: the router percent-decodes the path
 * (`POST /v1/%64eposits` is POST /v1/deposits), and every spelling of a path is that path, with
 * its quota and its idempotency records.
 */
export interface RouteKeys {
  rateBucket: RateBucket;
  /**
   * The idempotency endpoint ("same key, same body, same endpoint"): the method and the concrete
   * path, its parameters as the router decoded them and percent-encoded again as a client encodes
   * a path segment. Every spelling of one path gives one endpoint, the same as the path the SDK
   * sends; two card ids are two endpoints, and `a%2Fb` cannot pass for two segments. Present on
   * routes that take a key.
   */
  endpoint?: (params: unknown) => string;
}

/** A route's keys for `method`; `keyed` when the route takes an idempotency key (its endpoint is built). */
export function routeKeys(method: string, pattern: string, keyed: boolean): RouteKeys {
  const rateBucket = rateBucketFor(method, pattern);
  return keyed ? { rateBucket, endpoint: endpointBuilder(method, pattern) } : { rateBucket };
}

const paramName = /:(\w+)/g;

/** The endpoint of a request on the route `pattern`, from its decoded parameters. */
function endpointBuilder(method: string, pattern: string): (params: unknown) => string {
  // Plain `:name` parameters only (they end at `/`, `-` or `.`, as in the router); a wildcard, an
  // optional or regular-expression parameter or an escaped colon would need more than this.
  if (/[*(?]|::/.test(pattern))
    throw new Error(`route ${method} ${pattern}: an idempotent route's path may only have plain :name parameters`);
  const names: string[] = [];
  const pieces: string[] = [];
  let from = 0;
  for (const m of pattern.matchAll(paramName)) {
    pieces.push(pattern.slice(from, m.index));
    names.push(m[1]!);
    from = m.index + m[0].length;
  }
  const head = `${method} ${pieces.length ? pieces[0]! : pattern}`;
  if (names.length === 0) return () => head;
  pieces[0] = head;
  pieces.push(pattern.slice(from));
  return (params) => {
    const values = params as Record<string, string>;
    let endpoint = pieces[0]!;
    for (let i = 0; i < names.length; i++) endpoint += encodeURIComponent(values[names[i]!]!) + pieces[i + 1]!;
    return endpoint;
  };
}

export const rateLimitsPerMinute: Record<RateBucket | 'token_exchange', number> = {
  deposits: 60,
  members_write: 300,
  orders: 120,
  reads: 1200,
  token_exchange: 20,
};
