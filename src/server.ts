// Over 300 lines: a process's composition root, one ordered start-up and its shutdown in reverse.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { openDatabase, openDirectDatabase, type DatabaseHandle } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import { keyedReadStats } from './db/direct.js';
import { ConfigError, loadConfig, type Config } from './platform/config.js';
import { createMetrics } from './platform/metrics.js';
import { ApiCallLog } from './platform/api-call-log.js';
import { AuthCache, authChangeChannel } from './platform/auth-cache.js';
import { MemberCache, cachedMemberResolver, memberChangeChannel, memberWritesPlugin } from './platform/member-cache.js';
import { RateWindows } from './platform/rate-limit.js';
import { createWriteGroup } from './platform/write-group.js';
import { registerGroupCommitMetrics } from './platform/group-commit.js';
import { NonceBatcher } from './platform/nonce-batch.js';
import { resolveMember } from './modules/members/index.js';
import { AssetCatalogueCache, assetChangeChannel, useAssetCache } from './modules/assets/index.js';
import { mapDomainError } from './api-errors.js';
import { raiseAlert } from './modules/alerts/index.js';
import { buildPublicApp, cutConnections, type AppInstance, type CutRequest } from './platform/http-app.js';
import { loggerOptions } from './platform/request-log.js';
import { beginDrain } from './platform/health.js';
import { buildAdminApp } from './operator/admin-app.js';
import { randomToken } from './platform/ids.js';
import type { ServiceContext } from './service-context.js';
import { registerPublicRoutes } from './routes.js';
import { ensureDemoMerchant, type DemoCredentials } from './bootstrap.js';
import { createWorkers, type Workers } from './jobs/workers.js';
import { batchQueues, jobHandlers, tickers } from './background.js';
import { reportFailure } from './jobs/failures.js';
import { createUpstreams } from './upstreams/create-upstreams.js';
import { createClock } from './platform/clock.js';
import { closeDeliveryPools } from './modules/webhooks/index.js';
import { hostedScreenKeyBytes, parseHostedScreenKey } from './platform/keys.js';
import { randomBytes } from 'node:crypto';

export interface RunningService {
  ctx: ServiceContext;
  publicApp: AppInstance;
  adminApp: AppInstance;
  publicUrl: string;
  adminUrl: string;
  adminToken: string;
  demo: DemoCredentials | undefined;
  workers: Workers;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<Config>;
  tokenTtlSeconds?: number;
  /** Tests only: the clock of the timestamp tolerance and the nonce window (default `Date.now`). */
  requestClock?: () => number;
  logger?: boolean;
  /** The background log (ctx.log); default: pino on stdout at LOG_LEVEL, silent when `logger` is false. */
  log?: FastifyBaseLogger;
  /** Print the first-start banner (credentials, admin token). */
  announce?: boolean;
  /** Give the demo merchant a console owner user (default: when `announce`; its scrypt hash costs CPU every test would
   * pay). */
  demoConsoleUser?: boolean;
  /** `memory://` only: open the embedded database from this image (tests start from one migrated image). */
  embeddedImage?: Blob;
}

function resolveAdminToken(config: Config, announce: (line: string) => void): string {
  if (config.adminToken) return config.adminToken;
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = `adm_${randomToken(32)}`;
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  announce(`Operator API token (stored in ${file}): ${token}`);
  return token;
}

/**
 * The hosted screens' master key: `HOSTED_SCREEN_KEY`, or else one generated at first start and
 * kept in `DATA_DIR/hosted-screen-key` (like the operator token). Every process that serves the
 * screens or reads KYC images must hold the same key, so a deployment sets the variable: a kept
 * file is reported with a warning.
 */
function resolveHostedScreenKey(config: Config, log: FastifyBaseLogger): Buffer {
  if (config.hostedScreenKey) return config.hostedScreenKey;
  const file = join(config.dataDir, 'hosted-screen-key');
  let key: Buffer | undefined;
  if (existsSync(file)) {
    key = parseHostedScreenKey(readFileSync(file, 'utf8'));
    if (!key)
      throw new Error(
        `${file} does not hold a ${hostedScreenKeyBytes}-byte key (base64); set HOSTED_SCREEN_KEY or remove the file`,
      );
  } else {
    key = randomBytes(hostedScreenKeyBytes);
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  }
  log.warn(
    { file },
    'HOSTED_SCREEN_KEY is not set: the hosted-screen key kept in the data directory is used; in production ' +
      'set HOSTED_SCREEN_KEY (the same in every process), or CSRF tokens and KYC images break across processes',
  );
  return key;
}

/**
 * The background log: the pino logger Fastify makes from the listeners' options (level, redaction),
 * so the service needs no logger package of its own. A Fastify instance only builds it; it never listens.
 */
function backgroundLogger(config: Config, enabled: boolean): FastifyBaseLogger {
  return Fastify({ logger: enabled ? loggerOptions(config.logLevel) : false }).log.child({ component: 'background' });
}

/** Where the database is, as the start-up log says it (never the URL: it may hold a password). */
function databaseDescription(config: Config): { database: string; firstStart?: boolean } {
  if (config.databaseUrl === 'memory://') return { database: 'embedded, in memory' };
  if (config.databaseUrl) return { database: 'PostgreSQL server' };
  const dir = join(config.dataDir, 'pgdata');
  return { database: `embedded in ${dir}`, firstStart: !existsSync(join(dir, 'PG_VERSION')) };
}

/** Milliseconds since `start`, for the log. */
const since = (start: number) => Math.round(performance.now() - start);

/**
 * Behind a transaction-mode pooler the migrations run over the direct URL (`DATABASE_LISTEN_URL`):
 * their lock is a session's (connection.ts, `openDirectDatabase`).
 */
async function migrateBehindPooler(config: Config, handle: DatabaseHandle): Promise<number> {
  if (handle.kind !== 'postgres' || config.databasePooler !== 'transaction') return migrateToLatest(handle.db);
  const direct = openDirectDatabase(config.databaseListenUrl!);
  try {
    return await migrateToLatest(direct.db);
  } finally {
    await direct.close();
  }
}

export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const started = performance.now();
  const loaded = loadConfig();
  const config: Config = {
    ...loaded,
    ...options.config,
    publicBaseUrls: { ...loaded.publicBaseUrls, ...options.config?.publicBaseUrls },
  };
  const print = options.announce ? (line: string) => console.log(line) : () => {};
  const logger = options.logger ?? true;
  const log = options.log ?? backgroundLogger(config, logger);
  // A first start is silent for a while otherwise: creating an embedded cluster and running every migration take
  // seconds.
  if (
    config.databasePooler === 'transaction' &&
    /^postgres(ql)?:\/\//.test(config.databaseUrl ?? '') &&
    !config.databaseListenUrl
  ) {
    throw new ConfigError([
      'DATABASE_LISTEN_URL must be set with DATABASE_POOLER=transaction: a direct postgres:// URL (no ' +
        "pooler) for the migrations' lock and LISTEN",
    ]);
  }
  const where = databaseDescription(config);
  log.info(
    where,
    where.firstStart
      ? 'starting: creating the embedded database (first start; this takes some seconds)'
      : 'starting: opening the database',
  );
  const handle = await openDatabase(config.databaseUrl, config.dataDir, {
    poolMax: config.databasePoolMax,
    embeddedImage: options.embeddedImage,
    pooler: config.databasePooler,
    listenUrl: config.databaseListenUrl,
  });
  log.info({ ms: since(started) }, 'migrating the database schema (a first start runs every migration)');
  const migrationsStarted = performance.now();
  const applied = await migrateBehindPooler(config, handle);
  log.info(
    { applied, ms: since(migrationsStarted) },
    applied > 0 ? 'database schema migrated' : 'database schema up to date',
  );
  const metrics = createMetrics();
  config.hostedScreenKey = resolveHostedScreenKey(config, log);
  const clock = createClock();
  const memberCache = new MemberCache();
  // Every update or delete of members this process sends tells the member cache first (member-cache.ts).
  const db = handle.db.withPlugin(memberWritesPlugin(memberCache));
  const assetCache = new AssetCatalogueCache();
  useAssetCache(handle.db, assetCache);
  const ctx: ServiceContext = {
    config,
    db,
    databaseKind: handle.kind,
    metrics,
    apiCallLog: new ApiCallLog(handle.db, (err) =>
      reportFailure(
        { log, metrics },
        { job: 'api-call-log' },
        err,
        'a batch of the API call log could not be written; it is lost',
      ),
    ),
    tokenTtlSeconds: options.tokenTtlSeconds ?? config.tokenTtlSeconds,
    requestClock: options.requestClock ?? Date.now,
    clock,
    logger,
    log,
    upstreams: createUpstreams(handle.db, config, clock),
    resolveMember: cachedMemberResolver(resolveMember, memberCache),
    memberCache,
    mapDomainError,
    alertOperator: (alert, trx) => raiseAlert(trx ?? db, alert),
    authCache: new AuthCache(),
    // Connections left for reads and for writes that are not grouped (at most the pool less two);
    // the embedded database has one.
    // Through the handle with the member-writes plugin, like every other write of a request.
    writeGroup: createWriteGroup(db, {
      maxBatch: config.groupCommitMaxBatch,
      maxInFlight:
        handle.kind === 'embedded' ? 1 : Math.max(1, Math.min(config.groupCommitInFlight, config.databasePoolMax - 2)),
      // Writes run alone (withdrawals, orders, top-ups) of different merchants run side by side
      // on the pool less two, batches included: they are not held to GROUP_COMMIT_IN_FLIGHT.
      maxTransactions: handle.kind === 'embedded' ? 1 : Math.max(1, config.databasePoolMax - 2),
      answerAfterNextStart: handle.kind !== 'embedded',
    }),
    nonces: new NonceBatcher(handle.db),
    listen: handle.listen,
    rateWindows: new RateWindows(handle.db, (err) =>
      reportFailure(
        { log, metrics },
        { job: 'rate-windows' },
        err,
        'hits counted in memory could not be written; kept for the next attempt',
      ),
    ),
  };
  registerGroupCommitMetrics(metrics.registry, ctx.writeGroup.stats, ctx.nonces.stats, keyedReadStats(handle.db));
  const stopListeningAuth = await handle.listen(
    authChangeChannel,
    () => ctx.authCache.invalidate(),
    (listening) => ctx.authCache.setListening(listening),
  );
  const stopListeningMembers = await handle.listen(
    memberChangeChannel,
    (ids) => memberCache.onNotify(ids),
    (listening) => memberCache.setListening(listening),
  );
  const stopListeningAssets = await handle.listen(
    assetChangeChannel,
    () => assetCache.invalidate(),
    (listening) => assetCache.setListening(listening),
  );
  const stopListening = () => Promise.all([stopListeningAuth(), stopListeningMembers(), stopListeningAssets()]);
  const adminToken = resolveAdminToken(config, print);
  log.info('looking for merchants: an empty database gets the demo merchant');
  const demo = await ensureDemoMerchant(ctx, print, {
    consoleUser: options.demoConsoleUser ?? options.announce ?? false,
  });
  if (demo)
    log.info(
      { merchantId: demo.merchant_id, file: join(config.dataDir, 'demo-credentials.json') },
      'created the demo merchant (its credentials are in the file)',
    );

  const publicApp = buildPublicApp(ctx);
  await registerPublicRoutes(publicApp, ctx);
  const adminApp = buildAdminApp(ctx, adminToken);
  await publicApp.listen({ port: config.port, host: config.host });
  resolvePublicBaseUrls(config, publicApp, log);
  await adminApp.listen({ port: config.adminPort, host: config.adminHost });
  const workers: Workers = createWorkers(ctx, config.workers, { handlers: jobHandlers, tickers, batchQueues });

  const addr = (app: AppInstance) => {
    const a = app.server.address();
    return typeof a === 'object' && a
      ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
      : String(a);
  };
  const publicUrl = addr(publicApp);
  const adminUrl = addr(adminApp);
  log.info(
    { publicUrl, adminUrl, publicBaseUrls: config.publicBaseUrls, workers: config.workers, ms: since(started) },
    'started',
  );
  let closing: Promise<void> | undefined;
  return {
    ctx,
    publicApp,
    adminApp,
    publicUrl,
    adminUrl,
    adminToken,
    demo,
    workers,
    close() {
      closing ??= stop({ ctx, log, publicApp, adminApp, workers, timeoutMs: config.shutdownTimeoutMs }, async () => {
        closeDeliveryPools();
        await ctx.apiCallLog.flush();
        await ctx.rateWindows.close();
        await stopListening();
        await handle.close();
      });
      return closing;
    },
  };
}

/**
 * The public base URLs not configured (PUBLIC_BASE_URL_SANDBOX, PUBLIC_BASE_URL_PRODUCTION): the
 * local names the README gives, with the port the public listener got. Right for one machine
 * only, so a listener on another address than loopback is warned about.
 */
function resolvePublicBaseUrls(config: Config, publicApp: AppInstance, log: FastifyBaseLogger): void {
  const address = publicApp.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const defaults = {
    sandbox: `http://api-sandbox.localhost:${port}`,
    production: `http://api.localhost:${port}`,
  } as const;
  const missing = (['sandbox', 'production'] as const).filter((env) => config.publicBaseUrls[env] === undefined);
  // As origins (`URL.origin`), also when given by a caller rather than read by loadConfig.
  const origin = (url: string | undefined, fallback: string) => (url === undefined ? fallback : new URL(url).origin);
  config.publicBaseUrls = {
    sandbox: origin(config.publicBaseUrls.sandbox, defaults.sandbox),
    production: origin(config.publicBaseUrls.production, defaults.production),
  };
  const loopback = config.host === 'localhost' || config.host === '::1' || config.host.startsWith('127.');
  if (missing.length > 0 && !loopback) {
    log.warn(
      { unset: missing.map((env) => `PUBLIC_BASE_URL_${env.toUpperCase()}`), publicBaseUrls: config.publicBaseUrls },
      "hosted screens' links (hosted_url) use local default base URLs: set PUBLIC_BASE_URL_SANDBOX and " +
        'PUBLIC_BASE_URL_PRODUCTION to the names clients reach this service by',
    );
  }
}

interface Stopping {
  ctx: ServiceContext;
  log: FastifyBaseLogger;
  publicApp: AppInstance;
  adminApp: AppInstance;
  workers: Workers;
  timeoutMs: number;
}

/**
 * The shutdown: /readyz answers 503 at once; the public listener stops accepting and its requests
 * in flight finish; the operator listener (probes, metrics) closes after it, so a probe sees the
 * 503 for the whole drain. Past `timeoutMs` (SHUTDOWN_TIMEOUT_MS) the connections still open on
 * either listener are closed and the requests they carried are logged. Then the workers stop and
 * `release` closes the rest (the database last).
 */
async function stop(s: Stopping, release: () => Promise<void>): Promise<void> {
  const started = performance.now();
  beginDrain(s.ctx);
  s.log.info(
    { timeoutMs: s.timeoutMs },
    'shutdown: draining; /readyz answers 503, no new public connection is accepted, requests in flight finish',
  );
  // Closing drops the connections idle at that moment; one still answering a request would then
  // stay open for the keep-alive timeout (Fastify's 72 s) after its answer: it is dropped right after it instead.
  for (const app of [s.publicApp, s.adminApp]) app.server.keepAliveTimeout = 10;
  const closes = new Map<AppInstance, Promise<void>>();
  const close = (app: AppInstance) =>
    closes.get(app) ??
    closes
      .set(
        app,
        app.close().then(() => {}),
      )
      .get(app)!;
  const drained = close(s.publicApp).then(() => close(s.adminApp));
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    drained.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(resolve, s.timeoutMs, false))),
  ]);
  clearTimeout(timer);
  if (!inTime) {
    void close(s.adminApp);
    const cut: { listener: string; connections: number; requests: CutRequest[] }[] = [];
    for (const [listener, app] of [
      ['public', s.publicApp],
      ['operator', s.adminApp],
    ] as const) {
      const { connections, requests } = cutConnections(app);
      if (connections > 0) cut.push({ listener, connections, requests });
    }
    s.log.warn(
      { timeoutMs: s.timeoutMs, cut },
      'shutdown: the drain outlasted SHUTDOWN_TIMEOUT_MS; the connections still open were closed, cutting ' +
        'short the requests listed',
    );
    await drained;
  }
  s.log.info({ ms: since(started) }, 'shutdown: listeners closed; stopping the workers');
  await s.workers.stop();
  await release();
  s.log.info({ ms: since(started) }, 'shutdown: done');
}
