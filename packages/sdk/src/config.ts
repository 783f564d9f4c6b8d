/**
 * Client configuration: the options a merchant passes to `MerchantWalletClient`
 * and their resolved form with defaults applied.
 */

import { setTimeout as wait } from 'node:timers/promises';
import type { TokenStore } from './token.js';

export const SDK_VERSION = '0.1.0';

export interface MerchantWalletClientOptions {
  /** Base address, e.g. `http://api-sandbox.localhost:8080`. Its host decides the environment (Host header). */
  baseUrl: string;
  /**
   * If set (e.g. `127.0.0.1`), the TCP connection goes to this host while the `Host`
   * header (and TLS SNI) stays the `baseUrl`'s host:port. Default: the `baseUrl`'s host, except
   * `localhost` and `*.localhost` (`http://api-sandbox.localhost:8080`), which connect to
   * `127.0.0.1` as browsers do (RFC 6761: those names are the loopback address, whatever the
   * system resolver says).
   */
  connectHost?: string;
  /** Client identifier of the API key. */
  clientId: string;
  /** The `api_key` value (exchanged for an access token). */
  apiKey: string;
  /** The `signing_key` value (HMAC key for request signing). */
  signingKey: string;
  /** Total attempts for retryable failures (first attempt included). Default 4. */
  maxAttempts?: number;
  /** Base delay of the exponential backoff (full jitter). Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Cap of a single backoff delay. Default 5000 ms. Does not cap a server-given `Retry-After`. */
  retryMaxDelayMs?: number;
  /** Per-attempt timeout (connect + request + full response). Default 30000 ms. */
  timeoutMs?: number;
  /** `user-agent` header. */
  userAgent?: string;
  /** Renew the cached token this many seconds before `expired_at`. Default 60. */
  tokenRenewSkewSeconds?: number;
  /** Keeps tokens beyond this client (e.g. in a file for a command-line tool); default none. */
  tokenStore?: TokenStore;
  /** Injectable sleep (tests). Default: `node:timers/promises` setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable clock in milliseconds since the epoch (tests). Default `Date.now`. */
  now?: () => number;
  /** Injectable random source in [0, 1) used for the backoff jitter (tests). Default `Math.random`. */
  random?: () => number;
}

export interface ResolvedConfig {
  baseUrl: URL;
  /** Path prefix of the base URL without trailing slash ('' when none). */
  basePath: string;
  /** `host[:port]` as it goes into the Host header. */
  hostHeader: string;
  /** Where the TCP connection goes. */
  connectHost: string;
  port: number;
  protocol: 'http:' | 'https:';
  /** Hostname for TLS SNI (undefined for IP literals). */
  servername: string | undefined;
  clientId: string;
  apiKey: string;
  signingKey: string;
  maxAttempts: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  timeoutMs: number;
  userAgent: string;
  tokenRenewSkewSeconds: number;
  tokenStore: TokenStore | undefined;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  random: () => number;
}

function requireString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`MerchantWalletClient: option "${name}" must be a non-empty string`);
  }
  return value;
}

function nonNegativeNumber(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`MerchantWalletClient: option "${name}" must be a finite number >= 0`);
  }
  return value;
}

function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

/** `localhost` and any name under `.localhost` (RFC 6761 section 6.3), with or without a final dot. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

async function defaultSleep(ms: number): Promise<void> {
  await wait(ms);
}

export function resolveConfig(opts: MerchantWalletClientOptions): ResolvedConfig {
  if (opts === null || typeof opts !== 'object') {
    throw new TypeError('MerchantWalletClient: options object required');
  }
  const baseUrl = new URL(requireString('baseUrl', opts.baseUrl));
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') {
    throw new TypeError(`MerchantWalletClient: unsupported protocol ${baseUrl.protocol}`);
  }
  if (baseUrl.search || baseUrl.hash) {
    throw new TypeError('MerchantWalletClient: baseUrl must not contain a query string or fragment');
  }
  const protocol = baseUrl.protocol;
  const port = baseUrl.port ? Number(baseUrl.port) : protocol === 'https:' ? 443 : 80;
  // URL.hostname keeps IPv6 brackets; strip them for the socket connection.
  const hostname = baseUrl.hostname.replace(/^\[(.*)\]$/, '$1');
  const maxAttempts = nonNegativeNumber('maxAttempts', opts.maxAttempts, 4);
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new TypeError('MerchantWalletClient: option "maxAttempts" must be an integer >= 1');
  }
  const timeoutMs = nonNegativeNumber('timeoutMs', opts.timeoutMs, 30_000);
  if (timeoutMs === 0) throw new TypeError('MerchantWalletClient: option "timeoutMs" must be > 0');
  return {
    baseUrl,
    basePath: baseUrl.pathname.replace(/\/+$/, ''),
    // URL.host omits a default port, which matches what HTTP clients send.
    hostHeader: baseUrl.host,
    connectHost: opts.connectHost ?? (isLoopbackName(hostname) ? '127.0.0.1' : hostname),
    port,
    protocol,
    servername: isIpLiteral(hostname) ? undefined : hostname,
    clientId: requireString('clientId', opts.clientId),
    apiKey: requireString('apiKey', opts.apiKey),
    signingKey: requireString('signingKey', opts.signingKey),
    maxAttempts,
    retryBaseDelayMs: nonNegativeNumber('retryBaseDelayMs', opts.retryBaseDelayMs, 250),
    retryMaxDelayMs: nonNegativeNumber('retryMaxDelayMs', opts.retryMaxDelayMs, 5_000),
    timeoutMs,
    userAgent: opts.userAgent ?? `merchant-wallet-sdk-ts/${SDK_VERSION} node/${process.version}`,
    tokenRenewSkewSeconds: nonNegativeNumber('tokenRenewSkewSeconds', opts.tokenRenewSkewSeconds, 60),
    tokenStore: opts.tokenStore,
    sleep: opts.sleep ?? defaultSleep,
    now: opts.now ?? Date.now,
    random: opts.random ?? Math.random,
  };
}
