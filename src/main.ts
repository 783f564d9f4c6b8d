import { startService, type RunningService } from './server.js';
import { ConfigError } from './platform/config.js';

/** Exit status of a start refused for its configuration (sysexits EX_CONFIG). */
const exitConfigError = 78;

let service: RunningService;
try {
  service = await startService({ announce: true });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  // A bad setting is the operator's to fix: say which and what is allowed, without a stack trace.
  console.error(`${err.message}\nThe service did not start. See the configuration table in README.md.`);
  process.exit(exitConfigError);
}
console.log(`Merchant Wallet API on ${service.publicUrl} (operator API on ${service.adminUrl}); merchant console: ${service.publicUrl}/console`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    service.close().then(
      () => process.exit(0),
      (err) => {
        console.error('shutdown failed', err);
        process.exit(1);
      },
    );
  });
}
