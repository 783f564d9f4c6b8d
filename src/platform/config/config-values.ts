/**
 * What a setting's value may be: the checks and parsers loadConfig (config.ts) runs on the
 * variables, each naming the variable and what it allows when it refuses one, and the webhook
 * defaults and limits the OpenAPI document also states.
 */
import { isIP } from 'node:net';
import { parseHostedScreenKey } from '../auth/keys.js';
import { environmentFromHost } from '../environment.js';
import type { Environment } from '../../db/schema.js';
import { parseDatabaseTarget } from '../../db/hosts.js';
import { networkListFrom } from '../../upstreams/config.js';
import { wholeNumber, type EnvReader } from './env-reader.js';

export const defaultWebhookRetryScheduleMs = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** The contract's success rule: a 2xx within 15 s (WEBHOOK_DELIVERY_TIMEOUT_MS may only shorten it). */
export const webhookDeliveryTimeoutContractMs = 15_000;
/** An endpoint failing this long is disabled (WEBHOOK_DISABLE_AFTER_FAILING_MS's default: 3 days). */
export const defaultWebhookDisableAfterFailingMs = 3 * 24 * 3_600_000;

const day = 24 * 3_600_000;
const retryDelaysMax = 20;
const retryDelayMsMax = 7 * day;
const networksMax = 32;
const networkName = /^[A-Z][A-Z0-9_]{0,31}$/;
export const defaultChainNetworks = ['TRON', 'ETHEREUM', 'BITCOIN'];

/** `50,50,50` → [50, 50, 50]; at most 20 retries, each at most 7 days. */
export function parseRetrySchedule(value: string | undefined): number[] {
  if (value === undefined || value.trim() === '') return [...defaultWebhookRetryScheduleMs];
  const delays = value.split(',').map((part) => (wholeNumber.test(part.trim()) ? Number(part.trim()) : -1));
  if (delays.length > retryDelaysMax || delays.some((d) => d < 1 || d > retryDelayMsMax)) {
    throw new Error(
      `WEBHOOK_RETRY_SCHEDULE_MS must be 1 to ${retryDelaysMax} comma-separated whole numbers of ` +
        `milliseconds, each from 1 to ${retryDelayMsMax} (7 days); got ${JSON.stringify(value)}`,
    );
  }
  return delays;
}

/** `SIMULATOR_CHAIN_NETWORKS`: 1 to 32 network names (a letter, then letters, digits or _). */
export function parseChainNetworks(value: string | undefined): string[] {
  const list = networkListFrom(value, defaultChainNetworks);
  if (list.length > 0 && list.length <= networksMax && list.every((n) => networkName.test(n))) return list;
  throw new Error(
    `SIMULATOR_CHAIN_NETWORKS must be 1 to ${networksMax} comma-separated network names (a letter, then ` +
      `letters, digits or _); got ${JSON.stringify(value)}`,
  );
}

/** A listener address: an IP address or a host name. */
export function isHost(value: string): boolean {
  return (
    isIP(value) !== 0 ||
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
      value,
    )
  );
}

/** A trusted proxy as Fastify (proxy-addr) takes it: an address, an address/prefix, or a named range. */
export function isProxy(value: string): boolean {
  if (value === 'loopback' || value === 'linklocal' || value === 'uniquelocal') return true;
  const [address, prefix, ...rest] = value.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return wholeNumber.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * A public base URL: an http(s) origin without user, path, query or fragment, whose host the
 * service takes for `environment` (environment.ts); answered normalised (`URL.origin`: lower-case
 * host, default port dropped), or undefined when it is not one.
 */
export function publicBaseUrlOf(value: string, environment: Environment): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || /[?#]$/.test(value))
    return undefined;
  if (environmentFromHost(url.host) !== environment) return undefined;
  return url.origin;
}

export function isDatabaseUrl(value: string): boolean {
  // A host list (`h1:p1,h2:p2`) and target_session_attrs are read by db/hosts.ts.
  return value === 'memory://' || parseDatabaseTarget(value) !== undefined;
}

/** `HOSTED_SCREEN_KEY`: 32 bytes as 64 hex digits or base64; unset means "generate and keep one in DATA_DIR". */
export function hostedScreenKeyFrom(r: EnvReader): Buffer | undefined {
  const value = r.raw('HOSTED_SCREEN_KEY');
  if (value === undefined) return undefined;
  const key = parseHostedScreenKey(value);
  if (!key)
    r.refuse(
      'HOSTED_SCREEN_KEY',
      '32 random bytes written as 64 hex digits or as base64 (e.g. `openssl rand -base64 32`)',
      { secret: true },
    );
  return key;
}

export function publicBaseUrlFrom(r: EnvReader, name: string, environment: Environment): string | undefined {
  const value = r.raw(name);
  if (value === undefined) return undefined;
  const origin = publicBaseUrlOf(value, environment);
  if (origin === undefined) {
    const hosts =
      environment === 'sandbox'
        ? 'a host containing `api-sandbox` or `sandbox.`'
        : 'a host containing neither `api-sandbox` nor `sandbox.`';
    r.refuse(name, `an http:// or https:// origin (scheme, host, optional port; no path, query or user) with ${hosts}`);
  }
  return origin;
}
