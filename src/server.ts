import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase } from './db/connection.js';
import { keyedReadStats } from './db/direct.js';
import { ConfigError, loadConfig, type Config } from './platform/config/config.js';
import { createMetrics } from './platform/telemetry/metrics.js';
import { ApiCallLog } from './platform/telemetry/api-call-log.js';
import { AuthCache, authChangeChannel } from './platform/auth/auth-cache.js';
import {
  MemberCache,
  cachedMemberResolver,
  memberChangeChannel,
  memberWritesPlugin,
} from './platform/auth/member-cache.js';
import { RateWindows } from './platform/auth/rate-limit.js';
import { createWriteGroup } from './platform/writes/write-group.js';
import { registerGroupCommitMetrics } from './platform/writes/group-commit.js';
import { NonceBatcher } from './platform/writes/nonce-batch.js';
import { resolveMember } from './modules/members/index.js';
import { AssetCatalogueCache, assetChangeChannel, useAssetCache } from './modules/assets/index.js';
import { mapDomainError } from './api-errors.js';
import { raiseAlert } from './modules/alerts/index.js';
import { buildPublicApp, type AppInstance } from './platform/http/http-app.js';
import { buildAdminApp } from './operator/admin-app.js';
import type { ServiceContext } from './service-context.js';
import { registerPublicRoutes } from './routes.js';
import { ensureDemoMerchant, type DemoCredentials } from './bootstrap.js';
import { createWorkers, type Workers } from './jobs/workers.js';
import { batchQueues, jobHandlers, tickers } from './background.js';
import { reportFailure } from './jobs/failures.js';
import { createUpstreams } from './upstreams/create-upstreams.js';
import { createClock } from './platform/clock.js';
import { closeDeliveryPools } from './modules/webhooks/index.js';
import {
  backgroundLogger,
  databaseDescription,
  migrateBehindPooler,
  resolveAdminToken,
  resolveHostedScreenKey,
  resolvePublicBaseUrls,
  since,
} from './start-up.js';
import { stop } from './shutdown.js';

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
