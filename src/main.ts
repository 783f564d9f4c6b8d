import { startService, type RunningService } from './server.js';
import { ConfigError, telemetryEnvironment } from './platform/config/config.js';
import { shutdownTelemetry, startTelemetry } from './platform/telemetry/telemetry.js';

/** Exit status of a start refused for its configuration (sysexits EX_CONFIG). */
const exitConfigError = 78;

// Before the service: its pool, loggers and listeners are traced only if tracing is on when made.
await startTelemetry(telemetryEnvironment());

let service: RunningService;
try {
  service = await startService({ announce: true });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  // A bad setting is the operator's to fix: say which and what is allowed, without a stack trace.
  console.error(`${err.message}\nThe service did not start. See the configuration table in README.md.`);
  process.exit(exitConfigError);
}
console.log(
  `Merchant Wallet API on ${service.publicUrl} (operator API on ${service.adminUrl}); merchant ` +
    `console: ${service.publicUrl}/console`,
);

/**
 * After SHUTDOWN_TIMEOUT_MS the drain closes the connections still open (server.ts); this much
 * more is left for the workers to stop and the database to close. Past it the process exits
 * anyway (status 1): a job cut off is taken again when its lease ends, like after a crash.
 */
const releaseGraceMs = 5_000;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    const log = service.ctx.log;
    if (stopping) {
      // A second signal: the operator does not want to wait.
      log.warn({ signal }, 'shutdown: second signal; exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutdown: signal received');
    const limitMs = service.ctx.config.shutdownTimeoutMs + releaseGraceMs;
    setTimeout(() => {
      log.error({ limitMs }, 'shutdown: not finished in time (see the last shutdown line for the step); exiting');
      process.exit(1);
    }, limitMs).unref();
    service.close().then(
      // The spans still buffered go to the collector; a failed export (reported by the SDK on
      // stderr) does not fail the shutdown.
      () =>
        shutdownTelemetry()
          .catch(() => {})
          .then(() => process.exit(0)),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
