import type { Environment } from '../../db/columns.js';
import { invalidFields } from '../../platform/errors.js';
import { parseAllowlist } from '../../platform/http/ip-allowlist.js';
import { normaliseScopes, restrictedScopes } from '../../platform/auth/scopes.js';

/** Pure rules of merchants and their API keys. */

export const merchantStatuses = ['active', 'suspended', 'frozen', 'closed'] as const;

/** Restricted scopes wait for approval in production and are granted at once in the sandbox. */
export function splitScopes(
  environment: Environment,
  requested: readonly unknown[],
): { scopes: string[]; pending: string[] } {
  const wanted = normaliseScopes(requested);
  if (environment === 'sandbox') return { scopes: wanted, pending: [] };
  return {
    scopes: wanted.filter((s) => !restrictedScopes.has(s)),
    pending: wanted.filter((s) => restrictedScopes.has(s)),
  };
}

export function requireAllowlist(environment: Environment, allowlist: string): void {
  if (environment === 'production' && parseAllowlist(allowlist).length === 0) {
    throw invalidFields(
      [{ key: 'ip_allowlist', reason: 'required' }],
      'a production key needs a non-empty IP allow-list',
    );
  }
}

/** A key must not be born dead: an `expires_at` at or before now is refused. */
export function requireFutureExpiry(expiresAt: Date | null, now: Date): void {
  if (expiresAt !== null && expiresAt.getTime() <= now.getTime()) {
    throw invalidFields([{ key: 'expires_at', reason: 'in_the_past' }], 'expires_at has already passed');
  }
}

/**
 * Whether a change ends the key's current tokens for good: the key is stopped by it (disabled, or
 * expired), or was stopped before it. Tokens dead at any moment stay dead, so re-enabling a key
 * or lifting a passed expiry does not revive them.
 */
export function stopsTokens(
  before: { disabled: boolean; expires_at: Date | string | null },
  change: { disabled?: boolean; expiresAt?: Date | null },
  now: Date,
): boolean {
  const usable = (disabled: boolean, expiresAt: Date | string | null) =>
    !disabled && (expiresAt === null || new Date(expiresAt).getTime() > now.getTime());
  const after = usable(
    change.disabled ?? before.disabled,
    change.expiresAt === undefined ? before.expires_at : change.expiresAt,
  );
  return !usable(before.disabled, before.expires_at) || !after;
}
