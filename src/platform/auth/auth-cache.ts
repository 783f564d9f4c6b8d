import type { Environment } from '../../db/schema.js';
import { NotifiedCache } from './notified-cache.js';

/** What a token resolves to: its key, the key's merchant and their states. Times in ms since the epoch. */
export interface TokenState {
  tokenExpiresAt: number;
  keyId: string;
  merchantId: string;
  environment: Environment;
  signingKey: string;
  scopes: string[];
  ipAllowlist: string;
  disabled: boolean;
  keyExpiresAt: number | null;
  merchantStatus: string;
}

/** Tokens held per process; past this the oldest go (a miss costs one read). */
export const tokenCacheEntriesMax = 20_000;

/**
 * The per-process copy of token, key and merchant state (docs/performance.md, "Authentication
 * cache"). It is trusted only while the process listens to the database's change notifications:
 * every update or delete of `api_keys`, `merchants` or `access_tokens` notifies (triggers of
 * migration 024) and the notification empties it, so a disabled, expired, rotated or re-scoped
 * key takes effect in every process as soon as the notification arrives. Without a listening
 * connection (not yet connected, or lost) `get` finds nothing and every request reads the
 * database, as before. Expiry of tokens and keys is checked on each use against the stored times.
 *
 * A read that began before an invalidation is never stored (the generation it started under has
 * passed): it may have seen the state from before the change.
 */
export class AuthCache extends NotifiedCache<TokenState> {
  constructor() {
    super(tokenCacheEntriesMax);
  }
}

/** The channel migration 024's triggers notify on every change of a key, merchant or token. */
export const authChangeChannel = 'mwa_auth';
