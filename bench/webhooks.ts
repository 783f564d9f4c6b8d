/**
 * Webhook delivery throughput, end to end from the events outbox to a local receiver on 127.0.0.1:
 * the drain rate of a backlog, not the rate of its producer.
 *
 * 1. The service starts with its background workers off (`WORKERS=off`); `BENCH_WEBHOOK_EVENTS`
 *    (1,000) deposits are made through the API, each writing a `deposit.credited` event to the
 *    outbox, which nobody fans out yet. `BENCH_WEBHOOK_ENDPOINTS` (5) endpoints subscribe, so the
 *    backlog is events × endpoints deliveries.
 * 2. The service is stopped and started again on the same database with its workers on (its
 *    defaults otherwise): fan-out, claims, the POSTs and their records all run as in production.
 *    The clock starts when the process is ready (it starts its workers right after it listens).
 *
 * `perSecond` is deliveries received per second from that start to the last arrival (each
 * (endpoint, deposit) counted once); `p50`/`p99` are milliseconds from that start by which half
 * and 99 % of them had arrived. Deposits themselves (~100-300/s on the project machine) are not
 * measured here; bench/run.ts measures them.
 *
 * Called by bench/run.ts: `await benchWebhookDeliveries(databaseUrl, seconds)`; `memory://` (the
 * embedded database) becomes a data directory of its own, so that the restart keeps the backlog.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchMerchant, startServer } from './support.js';

/** Concurrent deposit callers while the backlog is made. */
const producers = 8;
/** Endpoints subscribed to the event: each deposit makes this many deliveries. */
const endpoints = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 5);
/** Deposits (events) made before the drain. */
const events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1_000);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface WebhookBench {
  perSecond: number;
  p50: number;
  p99: number;
  delivered: number;
  expected: number;
  endpoints: number;
  events: number;
  /** Requests received in all (a resend after a lost record counts here, not in `delivered`). */
  requests: number;
  drainSeconds: number;
  /** Milliseconds from the start of the draining service to the first arrival. */
  firstArrivalMs: number;
  note: string;
}

// eslint-disable-next-line @typescript-eslint/no-unused-vars
export async function benchWebhookDeliveries(databaseUrl: string, _seconds?: number): Promise<WebhookBench> {
  const arrivals = new Map<string, number>();
  let requests = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
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
  const embedded = databaseUrl === 'memory://';
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-bench-wh-')), ...(embedded ? { DATABASE_URL: '' } : {}) };
  const url = embedded ? '' : databaseUrl;
  const created: string[] = [];
  let server = await startServer(url, { ...env, WORKERS: 'off' });
  try {
    const { client } = await benchMerchant(server, 'webhook bench', [
      'members:write',
      'deposits:write',
      'webhooks:write',
      'merchant:read',
    ]);
    for (let i = 0; i < endpoints; i++)
      await client.webhooks.createEndpoint({
        url: `http://127.0.0.1:${port}/bench-${i}`,
        event_types: ['deposit.credited'],
      });
    await client.members.create({ external_member_id: 'webhook-bench' });
    let next = 0;
    const madeAt = performance.now();
    await Promise.all(
      Array.from({ length: producers }, async () => {
        // Bounded by count: each producer takes the next deposit until `events` are made.
        while (next < events) {
          next++;
          const d = await client.deposits.create({
            member_id: 'webhook-bench',
            asset: 'USDT',
            amount: '1',
            tx_hash: `0x${randomUUID()}`,
          });
          created.push((d as { id: string }).id);
        }
      }),
    );
    const producedPerSecond = Math.round(created.length / ((performance.now() - madeAt) / 1000));
    client.close();
    await server.stop();

    // The drain: the same database, workers on.
    // BENCH_WEBHOOK_PROFILE=<dir>: the draining service runs under `node --cpu-prof` (the profile is written at its
    // exit).
    const profileDir = process.env.BENCH_WEBHOOK_PROFILE;
    server = await startServer(url, env, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
    const start = performance.now();
    const expected = created.length * endpoints;
    // Bounded wait: at most 5 minutes.
    const waitUntil = start + 300_000;
    while (performance.now() < waitUntil && arrivals.size < expected) await new Promise((r) => setTimeout(r, 20));
    const times = [...arrivals.values()].map((t) => t - start).sort((a, b) => a - b);
    const last = times.at(-1) ?? 0;
    const delivered = arrivals.size;
    const first = times[0] ?? 0;
    const note =
      `drain of ${created.length} events already in the outbox (made by deposits at ${producedPerSecond}/s ` +
      `with the workers off) to ${endpoints} endpoints of a local receiver, from the start of a service to the ` +
      `last arrival`;
    console.log(
      `  webhooks: ${note}: ${delivered} of ${expected} in ${Math.round(last) / 1000} s (first arrival ` +
        `after ${Math.round(first)} ms)`,
    );
    return {
      perSecond: Math.round((delivered / (last / 1000)) * 10) / 10,
      p50: Math.round(percentile(times, 50)),
      p99: Math.round(percentile(times, 99)),
      delivered,
      expected,
      endpoints,
      events: created.length,
      requests,
      drainSeconds: Math.round(last) / 1000,
      firstArrivalMs: Math.round(first),
      note,
    };
  } finally {
    await server.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

// `npx tsx bench/webhooks.ts [databaseUrl]` runs it alone (`memory://`: the embedded database).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { loadavg } = await import('node:os');
  const before = loadavg();
  const result = await benchWebhookDeliveries(process.argv[2] ?? 'memory://');
  console.log({
    ...result,
    loadavgBefore: before.map((l) => l.toFixed(2)).join(' '),
    loadavgAfter: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  });
}
