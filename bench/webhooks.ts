/**
 * Webhook delivery throughput, end to end: deposits made through the API (each writes a
 * `deposit.credited` event) → fan-out ticker → delivery jobs → a local receiver on 127.0.0.1.
 * Each deposit's event goes to `BENCH_WEBHOOK_ENDPOINTS` (5) endpoints of the merchant.
 * `perSecond` is deliveries received per second from the first deposit to the last delivery;
 * `p50`/`p99` are milliseconds from a deposit's 201 to its webhook's arrival.
 *
 * Called by bench/run.ts: `await benchWebhookDeliveries(databaseUrl, seconds)`. The service runs
 * with its defaults (one process: 8 concurrent jobs, polled every JOB_POLL_INTERVAL_MS = 250 ms,
 * which bounds a process near 8 / 0.25 s = 32 deliveries per second; the variable, when set in
 * the environment, is passed on to the service).
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { adminCall, startServer } from './support.js';

/** Concurrent deposit callers. */
const producers = 8;
/** Endpoints subscribed to the event: each deposit makes this many deliveries. */
const endpoints = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 5);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function benchWebhookDeliveries(databaseUrl: string, seconds: number): Promise<{ perSecond: number; p50: number; p99: number; delivered: number; endpoints: number }> {
  const arrivals = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const id = `${req.url}:${JSON.parse(Buffer.concat(chunks).toString('utf8')).data.id as string}`;
        if (!arrivals.has(id)) arrivals.set(id, performance.now());
      } catch {
        /* not ours */
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as { port: number }).port;
  const server = await startServer(databaseUrl);
  try {
    const merchant = await adminCall(server, 'POST', '/admin/v1/merchants', { name: 'webhook bench' });
    const key = await adminCall(server, 'POST', `/admin/v1/merchants/${merchant.id}/api-keys`, {
      environment: 'sandbox', scopes: ['members:write', 'deposits:write', 'webhooks:write', 'merchant:read'],
    });
    const client = new MerchantWalletClient({
      baseUrl: `http://api-sandbox.localhost:${new URL(server.publicUrl).port}`, connectHost: '127.0.0.1',
      clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key,
    });
    for (let i = 0; i < endpoints; i++) await client.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/bench-${i}`, event_types: ['deposit.credited'] });
    await client.members.create({ external_member_id: 'webhook-bench' });

    const created = new Map<string, number>();
    const start = performance.now();
    const deadline = start + seconds * 1000;
    await Promise.all(Array.from({ length: producers }, async () => {
      // Bounded by time: each producer stops at the deadline.
      while (performance.now() < deadline) {
        const d = await client.deposits.create({ member_id: 'webhook-bench', asset: 'USDT', amount: '1', tx_hash: `0x${randomUUID()}` });
        for (let i = 0; i < endpoints; i++) created.set(`/bench-${i}:${(d as { id: string }).id}`, performance.now());
      }
    }));
    // Then wait for the backlog, at most 5 times the load's length plus 15 s.
    const waitUntil = performance.now() + seconds * 5_000 + 15_000;
    while (performance.now() < waitUntil && [...created.keys()].some((id) => !arrivals.has(id))) await new Promise((r) => setTimeout(r, 50));
    client.close();

    const latencies = [...created].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
    const last = Math.max(...[...created.keys()].map((id) => arrivals.get(id) ?? 0));
    const delivered = latencies.length;
    return {
      perSecond: Math.round((delivered / ((last - start) / 1000)) * 10) / 10,
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
      delivered,
      endpoints,
    };
  } finally {
    await server.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

// `npx tsx bench/webhooks.ts [databaseUrl] [seconds]` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchWebhookDeliveries(process.argv[2] ?? 'memory://', Number(process.argv[3] ?? 5));
  console.log(result);
}
