import { networkListFrom, upstreamAdaptersFrom } from '../upstreams/config.js';

export interface Config {
  port: number;
  host: string;
  adminPort: number;
  adminHost: string;
  adminToken: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  /** Addresses of reverse proxies whose X-Forwarded-For is believed; empty: the socket address is the client. */
  trustedProxies: string[];
  bodyLimitBytes: number;
  /** Background workers (cleanup, webhook delivery); tests may turn them off. */
  workers: boolean;
  /** Multiplies every rate-limit quota; 1 in service. Load tests raise it to measure the limiter without hitting it. */
  rateLimitScale: number;
  jobPollIntervalMs: number;
  /** How long a claimed job stays with its process; after a crash the job is taken again when it ends. */
  jobLeaseSeconds: number;
  /**
   * Webhooks: delay before each retry after a failed attempt, in milliseconds. Its length fixes the
   * attempts: length + 1 in all, then the record is `dead`. `WEBHOOK_RETRY_SCHEDULE_MS=50,50,50`
   * (comma-separated ms) shortens it for tests; default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
   */
  webhookRetryScheduleMs: number[];
  /**
   * Webhooks: which environments may target loopback, private and other internal addresses and use
   * plain http (`WEBHOOK_PRIVATE_TARGETS`): `sandbox` (default, local development), `none` (a hosted
   * sandbox should use this), `all` (production too: local end-to-end runs only, never deployed).
   * Metadata, link-local, unspecified and multicast addresses are refused in every mode.
   */
  webhookPrivateTargets: 'sandbox' | 'none' | 'all';
  /** Webhooks: an endpoint whose attempts have all failed for this long is disabled (`WEBHOOK_DISABLE_AFTER_FAILING_MS`, default 3 days). */
  webhookDisableAfterFailingMs: number;
  /** A delivery answered with 2xx within this time succeeds (15 s by the contract; tests shorten it). */
  webhookDeliveryTimeoutMs: number;
  /** Upstreams (docs/upstreams.md): adapter per upstream, `UPSTREAM_ADAPTERS=qrpay=simulator,...` or `UPSTREAM_<NAME>_ADAPTER`; default `simulator`. */
  upstreamAdapters: Record<string, string>;
  /** Simulator: ms until an accepted order becomes final, seen on the next query (`SIMULATOR_CONFIRM_DELAY_MS`, default 2000; 0 = synchronous). */
  simulatorConfirmDelayMs: number;
  /** Simulator: networks the chain provider has a channel on (`SIMULATOR_CHAIN_NETWORKS`, default TRON,ETHEREUM,BITCOIN). */
  simulatorChainNetworks: string[];
  /** An upstream call started longer ago than this is no longer in flight (`UPSTREAM_CALL_TIMEOUT_MS`, default 15000). */
  upstreamCallTimeoutMs: number;
  /** Reconciliation: first re-query after this many ms, doubling per check up to the max (`UPSTREAM_RECONCILE_DELAY_MS` 5000, `UPSTREAM_RECONCILE_MAX_DELAY_MS` 600000). */
  upstreamReconcileDelayMs: number;
  upstreamReconcileMaxDelayMs: number;
  /** A provider's "not found" means "never received" only this many ms after the call started (`UPSTREAM_NOT_FOUND_GRACE_MS`, default 60000). */
  upstreamNotFoundGraceMs: number;
  /** `retry_after` seconds of `service_unavailable` on POST /v1/merchant/deposit-address (`DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS`, default 60). */
  depositAddressRetryAfterSeconds: number;
}

export const defaultWebhookRetryScheduleMs = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** `50,50,50` → [50, 50, 50]; at most 20 retries, each at most 7 days. */
export function parseRetrySchedule(value: string | undefined): number[] {
  if (value === undefined || value.trim() === '') return [...defaultWebhookRetryScheduleMs];
  const delays = value.split(',').map((part) => intFrom(part.trim(), -1));
  if (delays.length > 20 || delays.some((d) => d < 1 || d > 7 * 24 * 3_600_000)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE_MS: 1 to 20 comma-separated delays of 1 ms to 7 days, got ${value}`);
  }
  return delays;
}

function privateTargetsFrom(value: string | undefined): Config['webhookPrivateTargets'] {
  if (value === undefined || value === '') return 'sandbox';
  if (value === 'sandbox' || value === 'none' || value === 'all') return value;
  throw new Error(`WEBHOOK_PRIVATE_TARGETS must be sandbox, none or all, got ${value}`);
}

function intFrom(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a whole number: ${value}`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: intFrom(env.PORT, 8080),
    host: env.HOST || '127.0.0.1',
    adminPort: intFrom(env.ADMIN_PORT, 8081),
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminToken: env.ADMIN_TOKEN || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    logLevel: env.LOG_LEVEL || 'info',
    trustedProxies: (env.TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    bodyLimitBytes: intFrom(env.BODY_LIMIT_BYTES, 1024 * 1024),
    workers: env.WORKERS !== 'off',
    rateLimitScale: intFrom(env.RATE_LIMIT_SCALE, 1) || 1,
    jobPollIntervalMs: intFrom(env.JOB_POLL_INTERVAL_MS, 250),
    jobLeaseSeconds: intFrom(env.JOB_LEASE_SECONDS, 60) || 60,
    webhookRetryScheduleMs: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE_MS),
    webhookPrivateTargets: privateTargetsFrom(env.WEBHOOK_PRIVATE_TARGETS),
    webhookDeliveryTimeoutMs: Math.min(15_000, intFrom(env.WEBHOOK_DELIVERY_TIMEOUT_MS, 15_000) || 15_000),
    webhookDisableAfterFailingMs: intFrom(env.WEBHOOK_DISABLE_AFTER_FAILING_MS, 3 * 24 * 3_600_000) || 3 * 24 * 3_600_000,
    upstreamAdapters: upstreamAdaptersFrom(env),
    simulatorConfirmDelayMs: intFrom(env.SIMULATOR_CONFIRM_DELAY_MS, 2000),
    simulatorChainNetworks: networkListFrom(env.SIMULATOR_CHAIN_NETWORKS, ['TRON', 'ETHEREUM', 'BITCOIN']),
    upstreamCallTimeoutMs: intFrom(env.UPSTREAM_CALL_TIMEOUT_MS, 15_000),
    upstreamReconcileDelayMs: intFrom(env.UPSTREAM_RECONCILE_DELAY_MS, 5_000),
    upstreamReconcileMaxDelayMs: intFrom(env.UPSTREAM_RECONCILE_MAX_DELAY_MS, 600_000),
    upstreamNotFoundGraceMs: intFrom(env.UPSTREAM_NOT_FOUND_GRACE_MS, 60_000),
    depositAddressRetryAfterSeconds: intFrom(env.DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS, 60) || 60,
  };
}
