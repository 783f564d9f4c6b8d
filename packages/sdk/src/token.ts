/**
 * Access-token cache (reference: POST /v1/connect/token; no refresh exists).
 *
 * - the token is cached and renewed `tokenRenewSkewSeconds` (default 60) before `expired_at`;
 * - concurrent callers share one in-flight exchange;
 * - `invalidate(token)` drops the cached token (only if it is still the given one, so that a
 *   burst of 401 `invalid_token` answers causes one exchange, not one per request).
 *
 * `expired_at` is converted to the local clock with the response `Date` header when present, so a
 * skewed local clock neither keeps an expired token nor exchanges on every call.
 */

import type { TokenResponse } from './types.js';

/**
 * Where tokens outlive the client (`MerchantWalletClientOptions.tokenStore`): a process that
 * starts often (a command-line tool) reuses the token an earlier one obtained instead of
 * exchanging the key each time (20 exchanges a minute per key). Keep it as secret as the key.
 */
export interface TokenStore {
  /** A token saved earlier, or undefined. Used while `expired_at` (less the renewal margin) is ahead. */
  load(): TokenResponse | undefined;
  /** Each new token, once exchanged. */
  save(token: TokenResponse): void;
}

export interface TokenExchangeResult {
  token: TokenResponse;
  /** Server time of the answer in ms (from the `Date` header), if known. */
  serverDateMs?: number;
}

interface CachedToken {
  value: string;
  /** Loaded from the token store (not exchanged by this cache). */
  stored?: boolean;
  /** Local time (ms) from which the token is considered stale and is renewed. */
  renewAtMs: number;
  response: TokenResponse;
}

export class TokenCache {
  private cached: CachedToken | undefined;
  private inflight: Promise<CachedToken> | undefined;

  /** A stored token the server refused: never loaded again by this cache. */
  private refusedStored: string | undefined;

  constructor(
    private readonly exchange: () => Promise<TokenExchangeResult>,
    private readonly now: () => number,
    private readonly renewSkewSeconds: number,
    private readonly store?: TokenStore,
  ) {}

  /** A valid access token, exchanging credentials when none is cached or it is about to expire. */
  async get(): Promise<string> {
    const c = this.cached ?? this.fromStore();
    if (c && this.now() < c.renewAtMs) return c.value;
    return (await this.refresh()).value;
  }

  /** The store's token while it has more than the renewal margin left (by the local clock). */
  private fromStore(): CachedToken | undefined {
    if (!this.store) return undefined;
    let token: TokenResponse | undefined;
    try {
      token = this.store.load();
    } catch {
      return undefined;
    }
    if (
      !token ||
      typeof token.auth_token !== 'string' ||
      token.auth_token === '' ||
      token.auth_token === this.refusedStored
    )
      return undefined;
    if (typeof token.expired_at !== 'number' || !Number.isFinite(token.expired_at)) return undefined;
    const renewAtMs = token.expired_at * 1000 - this.renewSkewSeconds * 1000;
    if (this.now() >= renewAtMs) return undefined;
    this.cached = { value: token.auth_token, renewAtMs, response: token, stored: true };
    return this.cached;
  }

  /** The last token response (scopes, expired_at), if any. */
  peek(): TokenResponse | undefined {
    return this.cached?.response;
  }

  /** Drops the cached token. With `token`, only when it is still the cached one. */
  invalidate(token?: string): void {
    if (token === undefined || this.cached?.value === token) {
      if (this.cached?.stored) this.refusedStored = this.cached.value;
      this.cached = undefined;
    }
  }

  private refresh(): Promise<CachedToken> {
    if (this.inflight) return this.inflight;
    const p = (async () => {
      const startedAt = this.now();
      const { token, serverDateMs } = await this.exchange();
      if (typeof token?.auth_token !== 'string' || token.auth_token === '') {
        throw new Error('token exchange answered without auth_token');
      }
      const localNow = this.now();
      let lifetimeMs: number;
      if (typeof token.expired_at === 'number' && Number.isFinite(token.expired_at)) {
        const reference = serverDateMs ?? localNow;
        // The Date header has one-second resolution: count from the start of that second.
        lifetimeMs = token.expired_at * 1000 - reference - (serverDateMs !== undefined ? 1000 : 0);
      } else {
        lifetimeMs = 30 * 60 * 1000; // documented validity
      }
      // Renew `skew` before expiry, but never treat a short-lived token as stale on arrival.
      const skewMs = Math.min(this.renewSkewSeconds * 1000, Math.max(0, lifetimeMs) / 2);
      const entry: CachedToken = {
        value: token.auth_token,
        renewAtMs: startedAt + lifetimeMs - skewMs,
        response: token,
      };
      this.cached = entry;
      try {
        this.store?.save(token);
      } catch {
        // A store that cannot keep it costs an exchange next time, not this call.
      }
      return entry;
    })();
    this.inflight = p;
    const clear = (): void => {
      if (this.inflight === p) this.inflight = undefined;
    };
    p.then(clear, clear);
    return p;
  }
}
