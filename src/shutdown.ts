import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from './service-context.js';
import { cutConnections, type AppInstance, type CutRequest } from './platform/http/http-app.js';
import { beginDrain } from './platform/http/health.js';
import type { Workers } from './jobs/workers.js';
import { since } from './start-up.js';

export interface Stopping {
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
export async function stop(s: Stopping, release: () => Promise<void>): Promise<void> {
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
