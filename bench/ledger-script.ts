import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/db/connection.js';
import { createDeposit } from '../src/modules/deposits/service.js';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) / 100;
}

/**
 * The deposit's database transaction (deposit row, ledger entry, event) issued directly, with the
 * same concurrency as the HTTP load: the API's ratio to this is the cost of the request pipeline.
 */
export async function plainDepositScript(databaseUrl: string, targets: Array<{ merchantId: string; memberIds: string[] }>, seconds: number, concurrency = 10) {
  const handle = await openDatabase(databaseUrl, '/tmp');
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  // Worker i deposits for merchant i mod targets: one target means every deposit touches one custody row.
  const worker = async (_: unknown, i: number) => {
    const { merchantId, memberIds } = targets[i % targets.length]!;
    while (Date.now() < deadline) {
      const started = performance.now();
      const memberId = memberIds[n++ % memberIds.length]!;
      await handle.db.transaction().execute((trx) =>
        createDeposit(trx, merchantId, 'sandbox', { member_id: memberId, asset: 'USDT', amount: '1.5', tx_hash: `plain-${randomUUID()}` }));
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await handle.close();
  latencies.sort((a, b) => a - b);
  return { perSecond: Math.round(latencies.length / seconds), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
