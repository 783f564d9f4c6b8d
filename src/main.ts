import { startService } from './server.js';

const service = await startService({ announce: true });
console.log(`Merchant Wallet API on ${service.publicUrl} (operator API on ${service.adminUrl})`);

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
