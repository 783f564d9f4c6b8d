/**
 * The scope catalogue. The reference names eleven; the rest are ours (documented in docs/scopes.md).
 * A write scope includes the read of the same resource, never the reverse.
 */
export const scopeCatalogue = [
  'remittances:read',
  'remittances:write',
  'kyc:read',
  'kyc:write',
  'exchange:read',
  'exchange:write',
  'cards:read',
  'cards:write',
  'cards:secure',
  'members:read',
  'members:write',
  'withdrawals:read',
  'withdrawals:write',
  'merchant:read',
  'merchant:write',
  'deposits:read',
  'deposits:write',
  'balances:read',
  'webhooks:read',
  'webhooks:write',
  'earn:read',
  'earn:write',
  'qrpay:read',
  'qrpay:write',
  // Extensions 13: the merchant's journal, and exports (`exports:write` includes `exports:read`).
  'ledger:read',
  'exports:read',
  'exports:write',
  // Read only (extensions 11): no write scope includes it, `webhooks:write` and `merchant:read` neither.
  'events:read',
] as const;

export type Scope = (typeof scopeCatalogue)[number];

/** Granted only after operator approval in production. */
export const restrictedScopes: ReadonlySet<string> = new Set(['deposits:write', 'cards:secure']);

const known: ReadonlySet<string> = new Set(scopeCatalogue);

export function isScope(value: string): value is Scope {
  return known.has(value);
}

/** Unknown scope keys are dropped silently; duplicates collapse. */
export function normaliseScopes(requested: readonly unknown[]): Scope[] {
  return [...new Set(requested.filter((s): s is Scope => typeof s === 'string' && isScope(s)))];
}

export function hasScope(granted: readonly string[], needed: Scope): boolean {
  if (granted.includes(needed)) return true;
  if (needed.endsWith(':read')) return granted.includes(needed.replace(/:read$/, ':write'));
  return false;
}
