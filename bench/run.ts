/**
 * `npm run bench`: throughput and latency of the request pipeline and the ledger, on the embedded
 * database and on PostgreSQL (when reachable), each figure also as a ratio of the bare route
 * measured in the same run. Results go to stdout and to bench/results.json.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MerchantWalletClient, signRequest } from '@merchant-wallet/sdk';
import { adminCall, load, startServer, type BenchServer, type Figures } from './support.js';
import { plainDepositScript } from './ledger-script.js';
import { benchWebhookDeliveries } from './webhooks.js';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 5);
const pgAdminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function freshPostgres(): Promise<string | undefined> {
  const name = `mwa_bench_${Date.now()}`;
  const client = new pg.Client({ connectionString: pgAdminUrl });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    return pgAdminUrl.replace(/\/[^/]*$/, `/${name}`);
  } catch (err) {
    console.warn(`PostgreSQL not reachable at ${pgAdminUrl}: ${(err as Error).message}`);
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

async function merchantClient(server: BenchServer) {
  const merchant = await adminCall(server, 'POST', '/admin/v1/merchants', { name: 'bench' });
  const key = await adminCall(server, 'POST', `/admin/v1/merchants/${merchant.id}/api-keys`, {
    environment: 'sandbox', scopes: ['members:write', 'deposits:write', 'balances:read', 'withdrawals:write', 'merchant:read'],
  });
  const port = new URL(server.publicUrl).port;
  const host = `api-sandbox.localhost:${port}`;
  const client = new MerchantWalletClient({ baseUrl: `http://${host}`, connectHost: '127.0.0.1', clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key });
  return { merchantId: merchant.id as string, key, host, client, token: await client.getToken() };
}

function signedPost(host: string, token: string, signingKey: string, path: string, body: () => unknown) {
  return {
    setupRequest: (req: any) => {
      const raw = JSON.stringify(body());
      const timestamp = String(Math.floor(Date.now() / 1000));
      const nonce = randomUUID();
      req.method = 'POST';
      req.path = path;
      req.body = raw;
      req.headers = {
        host, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-idempotency-key': randomUUID(),
        'x-timestamp': timestamp, 'x-nonce': nonce,
        'x-signature': signRequest({ method: 'POST', pathWithQuery: path, timestamp, nonce, rawBody: raw, signingKey }),
      };
      return req;
    },
  };
}

async function runSuite(label: string, databaseUrl: string): Promise<Record<string, Figures & { ratio: number }>> {
  const server = await startServer(databaseUrl);
  try {
    const m = await merchantClient(server);
    const member = (await m.client.members.create({ external_member_id: 'bench-member' })) as any;
    const base = { url: server.publicUrl, duration: durationSeconds };
    const figures: Figures[] = [];
    figures.push(await load('bare GET /healthz', { ...base, url: `${server.publicUrl}/healthz` }));
    figures.push(await load('authenticated GET /v1/members/{id}', {
      ...base, url: `${server.publicUrl}/v1/members/${member.id}`, headers: { host: m.host, authorization: `Bearer ${m.token}` },
    }));
    let n = 0;
    figures.push(await load('signed idempotent POST /v1/members', {
      ...base, requests: [signedPost(m.host, m.token, m.key.signing_key, '/v1/members', () => ({ external_member_id: `b-${process.pid}-${n++}` }))],
    }));
    const members: string[] = [];
    for (let i = 0; i < 200; i++) members.push(((await m.client.members.create({ external_member_id: `dep-${i}` })) as any).id);
    let d = 0;
    figures.push(await load('deposits POST /v1/deposits (200 members, one merchant)', {
      ...base, requests: [signedPost(m.host, m.token, m.key.signing_key, '/v1/deposits', () => ({ member_id: members[d % members.length], asset: 'USDT', amount: '1.5', tx_hash: `0x${d++}-${randomUUID()}` }))],
    }));
    const bare = figures[0]!.rps || 1;
    const out: Record<string, Figures & { ratio: number }> = {};
    for (const f of figures) out[f.name] = { ...f, ratio: Math.round((f.rps / bare) * 1000) / 1000 };
    if (databaseUrl.startsWith('postgres')) {
      // The same database transaction without HTTP: the API's ratio to it is the pipeline's cost.
      const api = out['deposits POST /v1/deposits (200 members, one merchant)']!;
      const plain = await plainDepositScript(databaseUrl, [{ merchantId: m.merchantId, memberIds: members }], durationSeconds);
      out['plain script: same transaction, one merchant'] = { name: 'plain', rps: plain.perSecond, p50: plain.p50, p99: plain.p99, errors: 0, non2xx: 0, ratio: Math.round((api.rps / Math.max(plain.perSecond, 1)) * 1000) / 1000 };
      // Ten merchants, so no two concurrent deposits share a custody row: the gap is what the hot row serialises.
      const spread: Array<{ merchantId: string; memberIds: string[] }> = [];
      for (let i = 0; i < 10; i++) {
        const other = await merchantClient(server);
        const ids: string[] = [];
        for (let j = 0; j < 20; j++) ids.push(((await other.client.members.create({ external_member_id: `s-${j}` })) as any).id);
        spread.push({ merchantId: other.merchantId, memberIds: ids });
        other.client.close();
      }
      const wide = await plainDepositScript(databaseUrl, spread, durationSeconds);
      out['plain script: same transaction, ten merchants'] = { name: 'plain-spread', rps: wide.perSecond, p50: wide.p50, p99: wide.p99, errors: 0, non2xx: 0, ratio: Math.round((plain.perSecond / Math.max(wide.perSecond, 1)) * 1000) / 1000 };
    }
    console.log(`\n${label}`);
    console.table(Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { 'req/s': v.rps, 'p50 ms': v.p50, 'p99 ms': v.p99, 'ratio': v.ratio, 'non-2xx': v.non2xx, errors: v.errors }])));
    return out;
  } finally {
    await server.stop();
  }
}

const results: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, seconds: durationSeconds };
const only = process.env.BENCH_DB; // 'embedded' or 'postgres' to run one of the two
if (only !== 'postgres') results.embedded = await runSuite('Embedded database (PGlite)', 'memory://');
const pgUrl = only === 'embedded' ? undefined : await freshPostgres();
if (pgUrl) results.postgres = await runSuite('PostgreSQL', pgUrl);
const webhooks: Record<string, unknown> = {};
if (only !== 'postgres') webhooks.embedded = await benchWebhookDeliveries('memory://', durationSeconds);
const pgForWebhooks = only === 'embedded' ? undefined : await freshPostgres();
if (pgForWebhooks) webhooks.postgres = await benchWebhookDeliveries(pgForWebhooks, durationSeconds);
console.log('\nWebhook deliveries to a local receiver (deposits → events → fan-out → delivery jobs)');
console.table(Object.fromEntries(Object.entries(webhooks).map(([k, v]: [string, any]) => [k, { 'deliveries/s': v.perSecond, 'p50 ms': Math.round(v.p50), 'p99 ms': Math.round(v.p99) }])));
results.webhooks = webhooks;
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
