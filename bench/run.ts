/**
 * `npm run bench`: every figure of issue 16 in one run, for the embedded database and for
 * PostgreSQL (when reachable), each as a ratio of the bare Fastify route measured in the same run
 * (docs/performance.md). Results go to stdout and to bench/results.json.
 *
 * BENCH_SECONDS (default 3) per figure, BENCH_ROUNDS (default 3) rounds of the ratio figures (bare
 * Fastify, /healthz, the read, in turn; the median round is reported), BENCH_CONNECTIONS (default
 * 32), BENCH_DB=embedded|postgres runs one database, BENCH_PG_URL the PostgreSQL server (a database is created per suite).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Agent, request as httpRequest } from 'node:http';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { adminCall, connections, depositBody, load, loadBoth, signedPosts, startBare, startServer, warmupSeconds, type BenchServer, type Figures } from './support.js';
import { benchWebhookDeliveries } from './webhooks.js';
import { findPgbench, runPgbench } from './pgbench.js';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 3);
/**
 * Pause before each write figure (`BENCH_SETTLE_SECONDS`, default 2): the background work the
 * previous figure left (its events' fan-out, autovacuum of the tables it grew) is not counted
 * against the next one.
 */
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? 2);
const settle = () => new Promise((r) => setTimeout(r, settleSeconds * 1000));
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

async function dropDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgAdminUrl });
  try {
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  } catch {
    /* left for the operator */
  } finally {
    await client.end().catch(() => {});
  }
}

interface Merchant {
  merchantId: string;
  host: string;
  token: string;
  signingKey: string;
  client: MerchantWalletClient;
  members: string[];
}

async function merchant(server: BenchServer, members: number): Promise<Merchant> {
  const m = await adminCall(server, 'POST', '/admin/v1/merchants', { name: 'bench' });
  const key = await adminCall(server, 'POST', `/admin/v1/merchants/${m.id}/api-keys`, {
    environment: 'sandbox', scopes: ['members:write', 'deposits:write', 'balances:read', 'withdrawals:write', 'merchant:read'],
  });
  const host = `api-sandbox.localhost:${new URL(server.publicUrl).port}`;
  const client = new MerchantWalletClient({ baseUrl: `http://${host}`, connectHost: '127.0.0.1', clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key });
  const ids: string[] = [];
  for (let i = 0; i < members; i++) ids.push(((await client.members.create({ external_member_id: `bench-${i}` })) as { id: string }).id);
  return { merchantId: m.id, host, token: await client.getToken(), signingKey: key.signing_key, client, members: ids };
}

const deposit = (m: Merchant, n: number) => ({ m, body: depositBody(m.members, n) });

type Row = Figures & { ratio: number; note?: string };

const keepAlive = new Agent({ keepAlive: true });

/**
 * How long a key change made through process A's operator API takes to reach process B: per
 * trial the key is re-scoped (merchant:read taken away, then given back) and B is asked until it
 * answers accordingly. Also the time from the operator's answer to the notification's arrival at
 * a third listening connection (negative: it arrived first).
 */
async function measurePropagation(a: BenchServer, b: BenchServer, databaseUrl: string, trials = 20) {
  const m = await adminCall(a, 'POST', '/admin/v1/merchants', { name: 'propagation' });
  const key = await adminCall(a, 'POST', `/admin/v1/merchants/${m.id}/api-keys`, { environment: 'sandbox', scopes: ['merchant:read', 'members:write'] });
  // fetch cannot set Host (the environment comes from it): node:http can.
  const host = `api-sandbox.localhost:${new URL(b.publicUrl).port}`;
  const call = (method: string, path: string, headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(`${b.publicUrl}${path}`, { method, headers: { host, ...headers }, agent: keepAlive }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  const token = (JSON.parse((await call('POST', '/v1/connect/token', { 'x-client-id': key.client_id, 'x-api-key': key.api_key })).body) as { auth_token: string }).auth_token;
  const read = async () => (await call('GET', '/v1/merchant/balances', { authorization: `Bearer ${token}` })).status;
  const listener = new pg.Client({ connectionString: databaseUrl });
  await listener.connect();
  await listener.query('LISTEN mwa_auth');
  let notifiedAt = 0;
  listener.on('notification', () => (notifiedAt = performance.now()));
  const waits: number[] = [];
  const notifyLags: number[] = [];
  let firstRequestRefused = 0;
  for (let i = 0; i < trials; i++) {
    for (const [scopes, expected] of [[['members:write'], 403], [['merchant:read', 'members:write'], 200]] as const) {
      notifiedAt = 0;
      await fetch(`${a.adminUrl}/admin/v1/api-keys/${key.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${a.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes }) });
      const answered = performance.now();
      let requests = 0;
      while ((await read()) !== expected) {
        requests++;
        if (performance.now() - answered > 5_000) break;
      }
      if (requests === 0) firstRequestRefused++;
      waits.push(performance.now() - answered);
      for (let w = 0; notifiedAt === 0 && w < 100; w++) await new Promise((r) => setTimeout(r, 1));
      notifyLags.push(notifiedAt - answered);
    }
  }
  await listener.end();
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const at = (xs: number[], p: number) => Math.round(sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! * 100) / 100;
  const result = {
    changes: waits.length,
    answeredOnFirstRequest: firstRequestRefused,
    untilAnsweredMs: { p50: at(waits, 0.5), max: at(waits, 1) },
    notificationAfterOperatorAnswerMs: { p50: at(notifyLags, 0.5), max: at(notifyLags, 1) },
  };
  console.log(`  propagation of a key change to the other process: ${JSON.stringify(result)}`);
  return result;
}

/**
 * Rounds of the ratio figures (`BENCH_ROUNDS`, default 3): bare Fastify, `/healthz` and the
 * authenticated read measured in turn, each round's ratios taken against that round's bare
 * Fastify, and the median round reported. On a shared machine the yardstick itself swings by
 * ±30 % from one minute to the next; a ratio of neighbours, taken several times, does not.
 */
const ratioRounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

/** The round whose ratio is the median (its own figures, so rps, latency and ratio belong together). */
function medianRound(rounds: { figures: Figures; ratio: number }[]): { figures: Figures; ratio: number; ratios: number[] } {
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, ratios: rounds.map((r) => Math.round(r.ratio * 1000) / 1000) };
}

async function runSuite(label: string, databaseUrl: string): Promise<Record<string, Row>> {
  const onPostgres = databaseUrl.startsWith('postgres');
  const server = await startServer(databaseUrl);
  // The yardstick runs through the suite: measured again in each round of the ratio figures.
  const bare = await startBare();
  let second: BenchServer | undefined;
  const out: Record<string, Row> = {};
  const add = (f: Figures, ratio: number, note?: string) => {
    out[f.name] = { ...f, ratio: Math.round(ratio * 1000) / 1000, ...(note ? { note } : {}) };
    console.log(`  ${label}: ${f.name}: ${f.rps}/s (ratio ${out[f.name]!.ratio}${note ? `, ${note}` : ''})`);
  };
  try {
    const one = await merchant(server, 200);
    const ten: Merchant[] = [];
    for (let i = 0; i < 10; i++) ten.push(await merchant(server, 20));
    const base = { duration: durationSeconds };
    const readOpts = (s: BenchServer) => ({ ...base, url: `${s.publicUrl}/v1/balances`, headers: { host: one.host, authorization: `Bearer ${one.token}`, 'x-on-behalf-of': 'bench-0' } });
    const rounds: { bare: Figures; health: Figures; read: Figures }[] = [];
    for (let r = 0; r < ratioRounds; r++) {
      const round = {
        bare: await load('bare Fastify', { ...base, url: bare.url }),
        health: await load('/healthz', { ...base, url: `${server.publicUrl}/healthz` }),
        read: await load('authenticated GET /v1/balances', readOpts(server)),
      };
      rounds.push(round);
      const of = (f: Figures) => `${f.rps}/s (${Math.round((f.rps / Math.max(round.bare.rps, 1)) * 1000) / 1000})`;
      console.log(`  ${label}: round ${r + 1}: bare Fastify ${round.bare.rps}/s, /healthz ${of(round.health)}, read ${of(round.read)}`);
    }
    const bareFigures = medianRound(rounds.map((r) => ({ figures: r.bare, ratio: r.bare.rps }))).figures;
    const bareRps = bareFigures.rps || 1;
    add(bareFigures, 1, `median of ${ratioRounds} rounds`);
    const health = medianRound(rounds.map((r) => ({ figures: r.health, ratio: r.health.rps / Math.max(r.bare.rps, 1) })));
    add(health.figures, health.ratio, `median round; rounds ${health.ratios.join(', ')}`);
    const readRound = medianRound(rounds.map((r) => ({ figures: r.read, ratio: r.read.rps / Math.max(r.bare.rps, 1) })));
    const read = readRound.figures;
    add(read, readRound.ratio, `median round; rounds ${readRound.ratios.join(', ')}`);
    let e = 0;
    await settle();
    const ofBare = (f: Figures) => f.rps / bareRps;
    const members = await load('signed POST /v1/members', { ...base, url: server.publicUrl, requests: signedPosts('/v1/members', () => ({ m: one, body: { external_member_id: `m-${e++}-${randomUUID()}` } })) });
    add(members, ofBare(members));
    await settle();
    const depOne = await load('signed POST /v1/deposits (one merchant)', { ...base, url: server.publicUrl, requests: signedPosts('/v1/deposits', (n) => deposit(one, n)) });
    add(depOne, ofBare(depOne));
    await settle();
    const depTen = await load('signed POST /v1/deposits (ten merchants)', { ...base, url: server.publicUrl, requests: signedPosts('/v1/deposits', (n) => deposit(ten[n % 10]!, Math.floor(n / 10))) });
    add(depTen, ofBare(depTen));
    add({ ...depOne, name: 'deposits: one merchant / ten merchants' }, depOne.rps / Math.max(depTen.rps, 1), 'target ≥ 0.9');
    if (onPostgres) {
      second = await startServer(databaseUrl);
      const twoRead = await loadBoth('two processes: authenticated GET /v1/balances', readOpts(server), readOpts(second));
      add(twoRead, twoRead.rps / Math.max(read.rps, 1), 'ratio to one process');
      const [s1, s2] = [server, second];
      await settle();
      const twoDep = await loadBoth('two processes: signed POST /v1/deposits (ten merchants)',
        { ...base, url: s1.publicUrl, requests: signedPosts('/v1/deposits', (n) => deposit(ten[(2 * n) % 10]!, n)) },
        { ...base, url: s2.publicUrl, requests: signedPosts('/v1/deposits', (n) => deposit(ten[(2 * n + 1) % 10]!, n)) });
      add(twoDep, twoDep.rps / Math.max(depTen.rps, 1), 'ratio to one process');
    }
    if (second) results.propagation = await measurePropagation(server, second, databaseUrl);
    for (const m of [one, ...ten]) m.client.close();
    return out;
  } finally {
    await bare.stop();
    await second?.stop();
    await server.stop();
  }
}

const started = loadavg();
let results: Record<string, any> = {};
results = { date: new Date().toISOString(), node: process.version, seconds: durationSeconds, warmupSeconds, settleSeconds, connections, loadavgBefore: started };
const only = process.env.BENCH_DB; // 'embedded' or 'postgres' to run one of the two

console.log(`load average ${started.map((l) => l.toFixed(2)).join(' ')}`);

const toClean: string[] = [];
if (only !== 'embedded') {
  const pgbench = findPgbench();
  const pgbenchDb = pgbench ? await freshPostgres() : undefined;
  if (pgbench && pgbenchDb) {
    toClean.push(pgbenchDb);
    results.pgbench = runPgbench(pgbench, pgbenchDb, connections, durationSeconds);
    console.log(`pgbench -N: ${results.pgbench.writeTps} tx/s, -S -M prepared: ${results.pgbench.readTps} reads/s`);
  } else console.log('pgbench: not found (or PostgreSQL unreachable), skipped');
  const pgUrl = await freshPostgres();
  if (pgUrl) {
    toClean.push(pgUrl);
    results.postgres = await runSuite('PostgreSQL', pgUrl);
    const pgWebhooks = await freshPostgres();
    if (pgWebhooks) {
      toClean.push(pgWebhooks);
      results.postgres.webhooks = await benchWebhookDeliveries(pgWebhooks, durationSeconds);
      console.log(`  PostgreSQL: webhook deliveries ${results.postgres.webhooks.perSecond}/s`);
    }
  }
}
if (only !== 'postgres') {
  results.embedded = await runSuite('Embedded (PGlite)', 'memory://');
  results.embedded.webhooks = await benchWebhookDeliveries('memory://', durationSeconds);
  console.log(`  Embedded: webhook deliveries ${results.embedded.webhooks.perSecond}/s`);
}
for (const url of toClean) await dropDatabase(url);
results.loadavgAfter = loadavg();

// One table: every figure, its ratio to bare Fastify, and embedded against PostgreSQL.
const names = [...new Set([...Object.keys(results.postgres ?? {}), ...Object.keys(results.embedded ?? {})])].filter((n) => n !== 'webhooks');
const table: Record<string, Record<string, string | number>> = {};
for (const n of names) {
  const p = results.postgres?.[n];
  const e = results.embedded?.[n];
  table[n] = {
    'PostgreSQL /s': p?.rps ?? '', 'PG ratio': p?.ratio ?? '', 'embedded /s': e?.rps ?? '', 'emb ratio': e?.ratio ?? '',
    'emb / PG': p && e && p.rps ? Math.round((e.rps / p.rps) * 100) / 100 : '',
    'p50/p99 ms (PG)': p ? `${p.p50}/${p.p99}` : '', 'non-2xx': `${p?.non2xx ?? ''}/${e?.non2xx ?? ''}`,
  };
}
const pw = results.postgres?.webhooks;
const ew = results.embedded?.webhooks;
table['webhook deliveries/s (local receiver)'] = { 'PostgreSQL /s': pw?.perSecond ?? '', 'PG ratio': '', 'embedded /s': ew?.perSecond ?? '', 'emb ratio': '', 'emb / PG': pw && ew ? Math.round((ew.perSecond / pw.perSecond) * 100) / 100 : '' };
if (results.pgbench) {
  const dep = results.postgres?.['signed POST /v1/deposits (one merchant)'];
  table['pgbench -N (tx/s)'] = { 'PostgreSQL /s': results.pgbench.writeTps, 'PG ratio': dep ? `deposit/pgbench ${Math.round((dep.rps / results.pgbench.writeTps) * 1000) / 1000}` : '' };
  table['pgbench -S -M prepared (reads/s)'] = { 'PostgreSQL /s': results.pgbench.readTps };
}
console.log(`\n${connections} connections, ${durationSeconds} s per figure after ${warmupSeconds} s of warm-up (${settleSeconds} s of pause before each write figure), Node ${process.version}; load average before ${started.map((l) => l.toFixed(2)).join(' ')}, after ${results.loadavgAfter.map((l: number) => l.toFixed(2)).join(' ')}`);
console.table(table);
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
