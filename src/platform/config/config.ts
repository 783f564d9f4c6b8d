// Over 300 lines: every setting documented once, with the one reader of the environment that fills them all.
import { upstreamAdaptersFrom } from '../../upstreams/config.js';
import type { Environment } from '../../db/schema.js';
import { parseDatabaseTarget } from '../../db/hosts.js';
import { EnvReader } from './env-reader.js';
import {
  defaultChainNetworks,
  defaultWebhookDisableAfterFailingMs,
  defaultWebhookRetryScheduleMs,
  hostedScreenKeyFrom,
  isDatabaseUrl,
  isHost,
  isProxy,
  parseChainNetworks,
  parseRetrySchedule,
  publicBaseUrlFrom,
  webhookDeliveryTimeoutContractMs,
} from './config-values.js';

/**
 * Every setting of the service, read from the environment once at start-up and validated here: no
 * other file reads `process.env`. A bad value stops the start (`ConfigError` lists every problem,
 * each naming the variable and what it allows). The README's configuration table lists them all.
 */

export interface Config {
  port: number;
  host: string;
  adminPort: number;
  adminHost: string;
  adminToken: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Connections to a PostgreSQL server (`DATABASE_POOL_MAX`, 1 to 1000, default 10). */
  databasePoolMax: number;
  /**
   * `DATABASE_POOLER=transaction`: `DATABASE_URL` goes through a transaction-mode pooler
   * (PgBouncer), so no state outlives a transaction (no named prepared statements); `none` (default).
   */
  databasePooler: 'none' | 'transaction';
  /**
   * `DATABASE_LISTEN_URL`: a direct connection for LISTEN (the caches' change notifications), needed
   * behind a transaction-mode pooler; unset: `DATABASE_URL`'s servers (none behind a pooler).
   */
  databaseListenUrl: string | undefined;
  /** Writes per group commit at most (`GROUP_COMMIT_MAX_BATCH`, 1 to 60, default 24; 1: each write alone). */
  groupCommitMaxBatch: number;
  /**
   * `GROUP_COMMIT_PARTITION`: what one batch may hold. `none` (default): writes arriving together
   * commit together whatever their merchant; `merchant`: one merchant's only (a sharded engine).
   */
  groupCommitPartition: 'none' | 'merchant';
  /**
   * `GROUP_COMMIT_IN_FLIGHT`: batches (transactions) running at once on PostgreSQL (the embedded
   * database runs one). Fewer batches in flight make larger batches: a write waits for the batch
   * before it instead of taking a connection of its own (docs/write-model.md).
   */
  groupCommitInFlight: number;
  logLevel: LogLevel;
  /** Addresses of reverse proxies whose X-Forwarded-For is believed; empty: the socket address is the client. */
  trustedProxies: string[];
  bodyLimitBytes: number;
  /**
   * The whole request, headers and body, must arrive within this many ms of its first byte
   * (`REQUEST_TIMEOUT_MS`, default 60000): Node's `requestTimeout` and `headersTimeout`, checked
   * every `requestTimeoutCheckMs(...)`. Past it the connection is answered 400 and closed.
   */
  requestTimeoutMs: number;
  /**
   * After SIGTERM, the requests in flight get this long to finish (`SHUTDOWN_TIMEOUT_MS`, default
   * 10000); then the connections still open are closed and what they carried is logged.
   */
  shutdownTimeoutMs: number;
  /**
   * Days an event is kept and readable (`EVENT_RETENTION_DAYS`, 30 to 3650, default 30; extensions
   * 11: at least 30), on its merchant's clock; then pruned with its delivery records (docs/events.md).
   */
  eventRetentionDays: number;
  /** Milliseconds between keep-alive comments of an event stream (at most 15 s by the contract; tests shorten it). Not
   * an environment variable. */
  eventStreamKeepAliveMs: number;
  /**
   * The public base URL of each environment (`PUBLIC_BASE_URL_SANDBOX`, `PUBLIC_BASE_URL_PRODUCTION`):
   * an origin (`https://host[:port]`) from which hosted screens' links (`hosted_url`) are built,
   * never from the request's Host header. Unset: `http://api-sandbox.localhost:<port>` and
   * `http://api.localhost:<port>` with the public listener's port, filled in by the start (src/server.ts).
   */
  publicBaseUrls: Partial<Record<Environment, string>>;
  /** Background workers (cleanup, webhook delivery); tests may turn them off. */
  workers: boolean;
  /** Multiplies every rate-limit quota; 1 in service. Load tests raise it to measure the limiter without hitting it. */
  rateLimitScale: number;
  jobPollIntervalMs: number;
  /** How long a claimed job stays with its process; after a crash the job is taken again when it ends. */
  jobLeaseSeconds: number;
  /** Background jobs one process runs at once (most wait on the database or a webhook receiver). */
  jobConcurrencyMax: number;
  /** Access-token lifetime (`TOKEN_TTL_SECONDS`): 1800 by the reference, shortened only by tests. */
  tokenTtlSeconds: number;
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
  /** Webhooks: an endpoint whose attempts have all failed for this long is disabled
   * (`WEBHOOK_DISABLE_AFTER_FAILING_MS`, default 3 days). */
  webhookDisableAfterFailingMs: number;
  /** A delivery answered with 2xx within this time succeeds (15 s by the contract; tests shorten it). */
  webhookDeliveryTimeoutMs: number;
  /** Upstreams (docs/upstreams.md): adapter per upstream, `UPSTREAM_ADAPTERS=qrpay=simulator,...` or
   * `UPSTREAM_<NAME>_ADAPTER`; default `simulator`. */
  upstreamAdapters: Record<string, string>;
  /** Simulator: ms until an accepted order becomes final, seen on the next query (`SIMULATOR_CONFIRM_DELAY_MS`, default
   * 2000; 0 = synchronous). */
  simulatorConfirmDelayMs: number;
  /** Simulator: networks the chain provider has a channel on (`SIMULATOR_CHAIN_NETWORKS`, default
   * TRON,ETHEREUM,BITCOIN). */
  simulatorChainNetworks: string[];
  /** An upstream call started longer ago than this is no longer in flight (`UPSTREAM_CALL_TIMEOUT_MS`, default 15000).
   * */
  upstreamCallTimeoutMs: number;
  /** Reconciliation: first re-query after this many ms, doubling per check up to the max (`UPSTREAM_RECONCILE_DELAY_MS`
   * 5000, `UPSTREAM_RECONCILE_MAX_DELAY_MS` 600000). */
  upstreamReconcileDelayMs: number;
  upstreamReconcileMaxDelayMs: number;
  /** A provider's "not found" means "never received" only this many ms after the call started
   * (`UPSTREAM_NOT_FOUND_GRACE_MS`, default 60000). */
  upstreamNotFoundGraceMs: number;
  /** `retry_after` seconds of `service_unavailable` on POST /v1/merchant/deposit-address
   * (`DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS`, default 60). */
  depositAddressRetryAfterSeconds: number;
  /**
   * The hosted screens' master key (`HOSTED_SCREEN_KEY`: 32 random bytes as 64 hex digits or
   * base64): CSRF tokens and the encryption of KYC images use keys derived from it (platform/auth/keys.ts).
   * Unset: the service generates one at first start and keeps it in `DATA_DIR/hosted-screen-key`
   * (src/server.ts), which suits one process on one disk only.
   */
  hostedScreenKey: Buffer | undefined;
  /** Console: a session unused this long ends (`CONSOLE_SESSION_IDLE_SECONDS`, default 1800: 30 minutes). */
  consoleSessionIdleSeconds: number;
  /** Console: a session ends this long after sign-in whatever its use (`CONSOLE_SESSION_MAX_SECONDS`, default 43200: 12
   * hours). */
  consoleSessionMaxSeconds: number;
  /**
   * Console: scrypt work factor of new password hashes, as log2 of N (15: 32 MiB and ~0.2 s of
   * CPU a hash). Not read from the environment: only tests lower it, to save CPU. A stored hash
   * carries its own parameters, so every hash verifies whatever the setting.
   */
  consolePasswordCost: number;
  /**
   * Tests only (`MWA_STRICT_RESPONSES`: `off` or `0` by default, `fail` or `1`, `report`): every
   * body a route answers through its response schema is checked against the schema first
   * (platform/http/response-check.ts); `fail` turns a mismatch into a 500, `report` only records it.
   */
  strictResponses: StrictResponses;
  /** Where `report` (and `fail`) write what they find (`MWA_STRICT_RESPONSES_LOG`, JSON lines appended); unset: stderr.
   * */
  strictResponsesLog: string | undefined;
}

/** The strict response check's modes (platform/http/response-check.ts). */
export type StrictResponses = 'off' | 'report' | 'fail';

const strictResponsesMode = { off: 'off', 0: 'off', fail: 'fail', 1: 'fail', report: 'report' } as const;

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/** A configuration that cannot start the service: every problem found, one line each. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const second = 1_000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

/**
 * How often Node looks for requests past `requestTimeoutMs` (its `connectionsCheckingInterval`,
 * 30 s by default): a tenth of the timeout, 100 ms to 1 s, so a request is cut at most a second late.
 */
export function requestTimeoutCheckMs(requestTimeoutMs: number): number {
  return Math.min(second, Math.max(100, Math.floor(requestTimeoutMs / 10)));
}

/**
 * The `OTEL_*` variables of `env`, for `startTelemetry` (the OpenTelemetry SDK reads the same
 * variables itself: endpoint, headers, service name, sampler); this file stays the one reader of
 * the process environment in our code.
 */
export function telemetryEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('OTEL_')));
}

/**
 * The configuration from `env` (the process environment by default). Throws a `ConfigError`
 * listing every bad value; the service does not start with one.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const r = new EnvReader(env);
  const port = (name: string, fallback: number) => r.int(name, fallback, 0, 65_535, ' (0: any free port)');
  const host = (name: string) => r.text(name, '127.0.0.1', isHost, 'an IP address or a host name');

  const config: Config = {
    port: port('PORT', 8080),
    host: host('HOST'),
    adminPort: port('ADMIN_PORT', 8081),
    adminHost: host('ADMIN_HOST'),
    adminToken: r.text(
      'ADMIN_TOKEN',
      undefined,
      (v) => /^[\x21-\x7e]{16,512}$/.test(v),
      '16 to 512 printable characters without spaces',
      { secret: true },
    ),
    databaseUrl: r.text(
      'DATABASE_URL',
      undefined,
      isDatabaseUrl,
      'unset (embedded database in DATA_DIR), memory:// or a postgres:// (postgresql://) URL',
      { secret: true },
    ),
    dataDir: r.raw('DATA_DIR') ?? './data',
    databasePoolMax: r.int('DATABASE_POOL_MAX', 10, 1, 1_000),
    databasePooler: r.oneOf('DATABASE_POOLER', ['none', 'transaction'] as const, 'none'),
    databaseListenUrl: r.text(
      'DATABASE_LISTEN_URL',
      undefined,
      (v) => parseDatabaseTarget(v) !== undefined,
      'a postgres:// (postgresql://) URL reaching PostgreSQL without a transaction-mode pooler',
      { secret: true },
    ),
    groupCommitMaxBatch: r.int('GROUP_COMMIT_MAX_BATCH', 24, 1, 60),
    groupCommitPartition: r.oneOf('GROUP_COMMIT_PARTITION', ['none', 'merchant'] as const, 'none'),
    groupCommitInFlight: r.int('GROUP_COMMIT_IN_FLIGHT', 2, 1, 64),
    logLevel: r.oneOf('LOG_LEVEL', logLevels, 'info'),
    trustedProxies: r.list(
      'TRUSTED_PROXIES',
      isProxy,
      'comma-separated IP addresses, address/prefix ranges, or loopback, linklocal, uniquelocal',
    ),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024, ' (bytes)'),
    requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS', minute, 1_000, 10 * minute, ' (ms)'),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10 * second, 1, 10 * minute, ' (ms)'),
    eventRetentionDays: r.int('EVENT_RETENTION_DAYS', 30, 30, 3650, ' (days)'),
    eventStreamKeepAliveMs: 10 * second,
    publicBaseUrls: {
      sandbox: publicBaseUrlFrom(r, 'PUBLIC_BASE_URL_SANDBOX', 'sandbox'),
      production: publicBaseUrlFrom(r, 'PUBLIC_BASE_URL_PRODUCTION', 'production'),
    },
    workers: r.oneOf('WORKERS', ['on', 'off'] as const, 'on') === 'on',
    rateLimitScale: r.int('RATE_LIMIT_SCALE', 1, 1, 1_000_000),
    jobPollIntervalMs: r.int('JOB_POLL_INTERVAL_MS', 250, 10, minute, ' (ms)'),
    jobLeaseSeconds: r.int('JOB_LEASE_SECONDS', 60, 1, day / second, ' (seconds)'),
    jobConcurrencyMax: r.int('JOB_CONCURRENCY', 32, 1, 1_000),
    tokenTtlSeconds: r.int('TOKEN_TTL_SECONDS', 1_800, 1, 1_800, ' (seconds; the reference fixes 1800)'),
    webhookRetryScheduleMs: r.parsed(
      () => parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE_MS),
      [...defaultWebhookRetryScheduleMs],
    ),
    webhookPrivateTargets: r.oneOf('WEBHOOK_PRIVATE_TARGETS', ['sandbox', 'none', 'all'] as const, 'sandbox'),
    webhookDeliveryTimeoutMs: r.int(
      'WEBHOOK_DELIVERY_TIMEOUT_MS',
      webhookDeliveryTimeoutContractMs,
      1,
      webhookDeliveryTimeoutContractMs,
      ' (ms; the contract allows 15 s)',
    ),
    webhookDisableAfterFailingMs: r.int(
      'WEBHOOK_DISABLE_AFTER_FAILING_MS',
      defaultWebhookDisableAfterFailingMs,
      1,
      90 * day,
      ' (ms, at most 90 days)',
    ),
    upstreamAdapters: r.parsed(() => upstreamAdaptersFrom(env), upstreamAdaptersFrom({})),
    simulatorConfirmDelayMs: r.int('SIMULATOR_CONFIRM_DELAY_MS', 2_000, 0, hour, ' (ms)'),
    simulatorChainNetworks: r.parsed(() => parseChainNetworks(env.SIMULATOR_CHAIN_NETWORKS), [...defaultChainNetworks]),
    upstreamCallTimeoutMs: r.int('UPSTREAM_CALL_TIMEOUT_MS', 15_000, 1, 10 * minute, ' (ms)'),
    upstreamReconcileDelayMs: r.int('UPSTREAM_RECONCILE_DELAY_MS', 5_000, 1, day, ' (ms)'),
    upstreamReconcileMaxDelayMs: r.int('UPSTREAM_RECONCILE_MAX_DELAY_MS', 600_000, 1, day, ' (ms)'),
    upstreamNotFoundGraceMs: r.int('UPSTREAM_NOT_FOUND_GRACE_MS', 60_000, 0, day, ' (ms)'),
    depositAddressRetryAfterSeconds: r.int('DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS', 60, 1, day / second, ' (seconds)'),
    hostedScreenKey: hostedScreenKeyFrom(r),
    consoleSessionIdleSeconds: r.int('CONSOLE_SESSION_IDLE_SECONDS', 1_800, 1, day / second, ' (seconds)'),
    consoleSessionMaxSeconds: r.int('CONSOLE_SESSION_MAX_SECONDS', 43_200, 1, (7 * day) / second, ' (seconds)'),
    consolePasswordCost: 15,
    strictResponses:
      strictResponsesMode[r.oneOf('MWA_STRICT_RESPONSES', ['off', '0', 'fail', '1', 'report'] as const, 'off')],
    strictResponsesLog: r.raw('MWA_STRICT_RESPONSES_LOG'),
  };
  if (config.upstreamReconcileMaxDelayMs < config.upstreamReconcileDelayMs) {
    r.refuse(
      'UPSTREAM_RECONCILE_MAX_DELAY_MS',
      `at least UPSTREAM_RECONCILE_DELAY_MS (${config.upstreamReconcileDelayMs})`,
    );
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
