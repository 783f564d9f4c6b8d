import type { ErrorCode } from './errors.js';
import type { Scope } from './scopes.js';

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
  /** `always`: signed whatever the method (POST /v1/deposits). Default: every method but GET and HEAD. */
  signature?: 'always' | 'by_method';
  /** Only in the sandbox; production answers 404 not_found. */
  sandboxOnly?: boolean;
  /**
   * `grouped`: the route's idempotent writes are group-committed (docs/group-commit.md): gathered
   * with other requests' into one transaction and one commit, each keeping its own result. For
   * short effects that stay inside the database; a merchant's grouped writes take turns.
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

export function rateBucketFor(method: string, path: string): RateBucket {
  if (method === 'GET' || method === 'HEAD') return 'reads';
  if (method === 'POST' && path === '/v1/deposits') return 'deposits';
  if (path === '/v1/members' || path.startsWith('/v1/members/')) return 'members_write';
  return 'orders';
}

export const rateLimitsPerMinute: Record<RateBucket | 'token_exchange', number> = {
  deposits: 60,
  members_write: 300,
  orders: 120,
  reads: 1200,
  token_exchange: 20,
};
