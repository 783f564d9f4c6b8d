/**
 * `npm run bench`: every figure of issue 16 in one run, for the embedded database and for
 * PostgreSQL (when reachable), each as a ratio of the bare Fastify route measured in the same run
 * (docs/performance.md). Results go to stdout and to bench/results.json.
 *
 * BENCH_SECONDS (default 3) per figure, BENCH_ROUNDS (default 3) rounds of the ratio figures (bare
 * Fastify, /healthz, the read, in turn; the median round is reported), BENCH_CONNECTIONS (default
 * 32), BENCH_DB=embedded|postgres runs one database, BENCH_PG_URL the PostgreSQL server (a database is created per
 * suite).
 *
 * Issue 37's figures (bench/spread.ts): writes spread over many merchants, each under its unscaled
 * quota, as ratios of `pgbench -N` measured in the same run, and /healthz and the read as a
 * deployment runs (default configuration: log level info, quotas unscaled, the built server),
 * beside the existing ones (logging off, one merchant, scaled quotas). A table of every target
 * with PASS/FAIL closes the run. BENCH_ONLY=id,id,... runs only those figures (ids in `figureIds`).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Agent, request as httpRequest } from 'node:http';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import {
  adminCall,
  benchMerchant,
  SetupError,
  connections,
  depositBody,
  load,
  loadBoth,
  signedPosts,
  startBare,
  startDeploymentServer,
  startServer,
  warmupSeconds,
  type BenchServer,
  type Figures,
} from './support.js';
import { loadPool, preparePool, readSpec, writeSpecs, type Pool, type SpreadFigures } from './spread.js';
import { benchWebhookDeliveries } from './webhooks.js';
import { findPgbench, runPgbench } from './pgbench.js';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 3);

/**
 * Every figure by id; `BENCH_ONLY=deposits-spread,members` runs only those (default: all).
 * Scaled-quota server (LOG_LEVEL=error, RATE_LIMIT_SCALE=100000, tsx): read-scaled (bare Fastify,
 * /healthz and the read, one merchant), members-one, deposits-one, deposits-ten, two-processes
 * (PostgreSQL), propagation (PostgreSQL). Deployment-mode server (bench/spread.ts): read-deployment
 * and the spread writes. webhooks: bench/webhooks.ts.
 */
const figureIds = [
  'read-scaled',
  'members-one',
  'deposits-one',
  'deposits-ten',
  'two-processes',
  'propagation',
  'webhooks',
  'read-deployment',
  ...writeSpecs.map((w) => w.id),
] as const;
const requested = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((x) => x.trim())
  .filter(Boolean);
const unknownIds = requested.filter((x) => !(figureIds as readonly string[]).includes(x));
if (unknownIds.length) {
  console.error(`BENCH_ONLY: unknown figure ${unknownIds.join(', ')}; figures: ${figureIds.join(', ')}`);
  process.exit(2);
}
const selected = new Set<string>(requested.length ? requested : figureIds);
const wants = (...ids: string[]) => ids.some((id) => selected.has(id));
/**
 * Pause before each write figure (`BENCH_SETTLE_SECONDS`, default 2): the background work the
 * previous figure left (its events' fan-out, autovacuum of the tables it grew) is not counted
 * against the next one.
 */
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? 2);
const pgAdminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/**
 * Before a figure: a CHECKPOINT on the PostgreSQL server (when one is used), so that no figure pays
 * for the dirty pages the figures before it left (a run measured 864 deposits/s with one falling
 * in its window, against 1,400-1,500/s alone), then a pause for the background work to settle.
 */
const settle = async () => {
  if (process.env.BENCH_DB !== 'embedded') {
    const client = new pg.Client({ connectionString: pgAdminUrl });
    try {
      await client.connect();
      await client.query('CHECKPOINT');
    } catch {
      // no server, or not allowed: the pause alone
    } finally {
      await client.end().catch(() => {});
    }
  }
  await new Promise((r) => setTimeout(r, settleSeconds * 1000));
};

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
  const {
    merchant: m,
    key,
    host,
    client,
  } = await benchMerchant(server, 'bench', [
    'members:write',
    'deposits:write',
    'balances:read',
    'withdrawals:write',
    'merchant:read',
  ]);
  const ids: string[] = [];
  for (let i = 0; i < members; i++)
    ids.push(((await client.members.create({ external_member_id: `bench-${i}` })) as { id: string }).id);
  return { merchantId: m.id, host, token: await client.getToken(), signingKey: key.signing_key, client, members: ids };
}

const deposit = (m: Merchant, n: number) => ({ m, body: depositBody(m.members, n) });

const keepAlive = new Agent({ keepAlive: true });

/**
 * How long a key change made through process A's operator API takes to reach process B: per
 * trial the key is re-scoped (merchant:read taken away, then given back) and B is asked until it
 * answers accordingly. Also the time from the operator's answer to the notification's arrival at
 * a third listening connection (negative: it arrived first).
 */
async function measurePropagation(a: BenchServer, b: BenchServer, databaseUrl: string, trials = 20) {
  const m = await adminCall(a, 'POST', '/admin/v1/merchants', { name: 'propagation' });
  const key = await adminCall(a, 'POST', `/admin/v1/merchants/${m.id}/api-keys`, {
    environment: 'sandbox',
    scopes: ['merchant:read', 'members:write'],
  });
  // fetch cannot set Host (the environment comes from it): node:http can.
  const host = `api-sandbox.localhost:${new URL(b.publicUrl).port}`;
  const call = (method: string, path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${b.publicUrl}${path}`,
        { method, headers: { host, ...headers }, agent: keepAlive },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const token = (
    JSON.parse(
      (await call('POST', '/v1/connect/token', { 'x-client-id': key.client_id, 'x-api-key': key.api_key })).body,
    ) as { auth_token: string }
  ).auth_token;
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
    for (const [scopes, expected] of [
      [['members:write'], 403],
      [['merchant:read', 'members:write'], 200],
    ] as const) {
      notifiedAt = 0;
      await fetch(`${a.adminUrl}/admin/v1/api-keys/${key.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${a.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ scopes }),
      });
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
  const at = (xs: number[], p: number) =>
    Math.round(sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! * 100) / 100;
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
function medianRound(rounds: { figures: Figures; ratio: number }[]): {
  figures: Figures;
  ratio: number;
  ratios: number[];
} {
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  return {
    ...sorted[Math.floor((sorted.length - 1) / 2)]!,
    ratios: rounds.map((r) => Math.round(r.ratio * 1000) / 1000),
  };
}

type Spread = SpreadFigures & { ratio?: number; ofPgbench?: number; note?: string; setupError?: string };

async function runSuite(
  label: string,
  databaseUrl: string,
  deploymentDatabaseUrl: string | undefined,
): Promise<Record<string, any>> {
  const onPostgres = databaseUrl.startsWith('postgres');
  const out: Record<string, any> = {};
  // The yardstick runs through the suite: measured again in each round of the ratio figures.
  const bare = wants('read-scaled', 'read-deployment') ? await startBare() : undefined;
  const add = (f: Figures, ratio: number, note?: string) => {
    out[f.name] = { ...f, ratio: Math.round(ratio * 1000) / 1000, ...(note ? { note } : {}) };
    console.log(
      `  ${label}: ${f.name}: ${f.rps}/s ` +
        `(ratio ${out[f.name]!.ratio}${note ? `, ${note}` : ''}${f.non2xx ? `, ${f.non2xx} non-2xx` : ''})`,
    );
  };
  try {
    if (wants('read-scaled', 'members-one', 'deposits-one', 'deposits-ten', 'two-processes', 'propagation'))
      await scaledPart(label, databaseUrl, onPostgres, bare, out, add);
    if (wants('read-deployment', ...writeSpecs.map((w) => w.id)))
      await deploymentPart(label, deploymentDatabaseUrl, bare, out);
    return out;
  } finally {
    await bare?.stop();
  }
}

/** The figures of issue 16 as measured until now: logging off (error), scaled quotas, src/ through tsx. */
async function scaledPart(
  label: string,
  databaseUrl: string,
  onPostgres: boolean,
  bare: { url: string } | undefined,
  out: Record<string, any>,
  add: (f: Figures, ratio: number, note?: string) => void,
): Promise<number> {
  const server = await startServer(databaseUrl);
  let second: BenchServer | undefined;
  try {
    const one = await merchant(server, 200);
    const ten: Merchant[] = [];
    if (wants('deposits-ten', 'two-processes')) for (let i = 0; i < 10; i++) ten.push(await merchant(server, 20));
    const base = { duration: durationSeconds };
    const readOpts = (s: BenchServer) => ({
      ...base,
      url: `${s.publicUrl}/v1/balances`,
      headers: { host: one.host, authorization: `Bearer ${one.token}`, 'x-on-behalf-of': 'bench-0' },
    });
    let bareRps = 0;
    let read: Figures | undefined;
    if (wants('read-scaled') && bare) {
      const rounds: { bare: Figures; health: Figures; read: Figures }[] = [];
      for (let r = 0; r < ratioRounds; r++) {
        const round = {
          bare: await load('bare Fastify', { ...base, url: bare.url }),
          health: await load('/healthz', { ...base, url: `${server.publicUrl}/healthz` }),
          read: await load('authenticated GET /v1/balances', readOpts(server)),
        };
        rounds.push(round);
        const of = (f: Figures) => `${f.rps}/s (${Math.round((f.rps / Math.max(round.bare.rps, 1)) * 1000) / 1000})`;
        console.log(
          `  ${label}: scaled: round ${r + 1}: bare Fastify ${round.bare.rps}/s, ` +
            `/healthz ${of(round.health)}, read ${of(round.read)}`,
        );
      }
      const bareFigures = medianRound(rounds.map((r) => ({ figures: r.bare, ratio: r.bare.rps }))).figures;
      bareRps = bareFigures.rps || 1;
      add(bareFigures, 1, `median of ${ratioRounds} rounds`);
      const health = medianRound(
        rounds.map((r) => ({ figures: r.health, ratio: r.health.rps / Math.max(r.bare.rps, 1) })),
      );
      add(health.figures, health.ratio, `median round; rounds ${health.ratios.join(', ')}`);
      const readRound = medianRound(
        rounds.map((r) => ({ figures: r.read, ratio: r.read.rps / Math.max(r.bare.rps, 1) })),
      );
      read = readRound.figures;
      add(read, readRound.ratio, `median round; rounds ${readRound.ratios.join(', ')}`);
    }
    let e = 0;
    const ofBare = (f: Figures) => (bareRps ? f.rps / bareRps : 0);
    if (wants('members-one')) {
      await settle();
      const members = await load('signed POST /v1/members', {
        ...base,
        url: server.publicUrl,
        requests: signedPosts('/v1/members', () => ({
          m: one,
          body: { external_member_id: `m-${e++}-${randomUUID()}` },
        })),
      });
      add(members, ofBare(members));
    }
    let depOne: Figures | undefined;
    if (wants('deposits-one')) {
      await settle();
      depOne = await load('signed POST /v1/deposits (one merchant)', {
        ...base,
        url: server.publicUrl,
        requests: signedPosts('/v1/deposits', (n) => deposit(one, n)),
      });
      add(depOne, ofBare(depOne));
    }
    let depTen: Figures | undefined;
    if (wants('deposits-ten')) {
      await settle();
      depTen = await load('signed POST /v1/deposits (ten merchants)', {
        ...base,
        url: server.publicUrl,
        requests: signedPosts('/v1/deposits', (n) => deposit(ten[n % 10]!, Math.floor(n / 10))),
      });
      add(depTen, ofBare(depTen));
    }
    if (depOne && depTen)
      add(
        { ...depOne, name: 'deposits: one merchant / ten merchants' },
        depOne.rps / Math.max(depTen.rps, 1),
        'target ≥ 0.9',
      );
    if (onPostgres && wants('two-processes', 'propagation')) {
      second = await startServer(databaseUrl);
      if (wants('two-processes')) {
        const twoRead = await loadBoth(
          'two processes: authenticated GET /v1/balances',
          readOpts(server),
          readOpts(second),
        );
        add(
          twoRead,
          read ? twoRead.rps / Math.max(read.rps, 1) : 0,
          read ? 'ratio to one process' : 'ratio to one process: read-scaled not run',
        );
        const [s1, s2] = [server, second];
        await settle();
        const twoDep = await loadBoth(
          'two processes: signed POST /v1/deposits (ten merchants)',
          { ...base, url: s1.publicUrl, requests: signedPosts('/v1/deposits', (n) => deposit(ten[(2 * n) % 10]!, n)) },
          {
            ...base,
            url: s2.publicUrl,
            requests: signedPosts('/v1/deposits', (n) => deposit(ten[(2 * n + 1) % 10]!, n)),
          },
        );
        add(
          twoDep,
          depTen ? twoDep.rps / Math.max(depTen.rps, 1) : 0,
          depTen ? 'ratio to one process' : 'ratio to one process: deposits-ten not run',
        );
      }
      if (wants('propagation')) results.propagation = await measurePropagation(server, second, databaseUrl);
    }
    for (const m of [one, ...ten]) m.client.close();
    return bareRps;
  } finally {
    await second?.stop();
    await server.stop();
  }
}

/** Expected top rate of a spread figure: twice its target (its tenants are sized for it; the load stops if it is
 * passed). */
const spreadHeadroom = Number(process.env.BENCH_SPREAD_HEADROOM ?? 2);

/**
 * Issue 37's figures against the service as a deployment runs it (startDeploymentServer): /healthz
 * and the read spread over merchants and members in rounds with bare Fastify, then each write
 * spread over merchants, every merchant under its unscaled quota (bench/spread.ts).
 */
async function deploymentPart(
  label: string,
  databaseUrl: string | undefined,
  bare: { url: string } | undefined,
  out: Record<string, any>,
): Promise<void> {
  const server = await startDeploymentServer(databaseUrl);
  const mode =
    `deployment mode ` +
    `(${server.entry === 'built' ? 'built server, node --enable-source-maps' : 'src/ through tsx'}, LOG_LEVEL ` +
    `and RATE_LIMIT_SCALE unset)`;
  console.log(`  ${label}: ${mode}`);
  out.deploymentMode = {
    entry: server.entry,
    env: 'defaults (LOG_LEVEL info, RATE_LIMIT_SCALE 1, DATABASE_POOL_MAX 10, WORKERS on)',
    database: databaseUrl ? 'PostgreSQL' : 'embedded in DATA_DIR (the default)',
  };
  const logBefore = server.logBytes();
  const report = (id: string, f: Spread) => {
    out[id] = f;
    const bad =
      f.tooManyRequests || f.non2xx || f.errors
        ? `, INVALID: ${f.tooManyRequests} × 429, ${f.non2xx} non-2xx ` +
          `(${JSON.stringify(f.statuses)}), ${f.errors} errors; first bodies ${JSON.stringify(f.samples)}`
        : '';
    const ratio =
      f.ofPgbench !== undefined
        ? `, ${f.ofPgbench} of pgbench -N`
        : f.ratio !== undefined
          ? `, ${f.ratio} of bare Fastify`
          : '';
    console.log(
      `  ${label}: ${f.name}: ${f.rps}/s${ratio} (${f.merchants} merchants, ${f.members} members, ` +
        `≤ ${f.maxRequestsPerMerchant} requests per merchant of ${f.budgetPerMerchant} allowed; ${f.seconds} ` +
        `s${f.stoppedEarly ? ', STOPPED EARLY: budgets spent' : ''}${f.note ? `; ${f.note}` : ''})${bad}`,
    );
  };
  const failed = (id: string, name: string, err: unknown) => {
    const text =
      err instanceof SetupError
        ? `${err.step} answered ${err.status}: ${err.body}`
        : String((err as Error)?.stack ?? err);
    out[id] = { name, setupError: text, rps: 0, valid: false };
    console.log(`  ${label}: ${name}: NOT MEASURED, set-up failed: ${text}`);
  };
  try {
    if (wants('read-deployment')) {
      if (!bare) throw new Error('bare Fastify not started');
      const rounds: { bare: Figures; health: Figures; read: SpreadFigures }[] = [];
      let pool: Pool | undefined;
      try {
        for (let r = 0; r < ratioRounds; r++) {
          const b = await load('bare Fastify', { duration: durationSeconds, url: bare.url });
          const health = await load('/healthz', { duration: durationSeconds, url: `${server.publicUrl}/healthz` });
          if (!pool) {
            // Sized for twice the target (1/3 of bare Fastify) over every round.
            pool = await preparePool(server, readSpec, b.rps * (2 / 3), durationSeconds, ratioRounds);
            await settle();
          }
          const read = await loadPool(server.publicUrl, pool, durationSeconds);
          rounds.push({ bare: b, health, read });
          const of = (rps: number) => `${rps}/s (${Math.round((rps / Math.max(b.rps, 1)) * 1000) / 1000})`;
          console.log(
            `  ${label}: deployment: round ${r + 1}: bare Fastify ${b.rps}/s, ` +
              `/healthz ${of(health.rps)}${health.non2xx ? ` ${health.non2xx} non-2xx` : ''}, ` +
              `read ${of(read.rps)}${read.tooManyRequests ? `, ${read.tooManyRequests} × 429` : ''}` +
              `${read.non2xx ? `, ${read.non2xx} non-2xx ${JSON.stringify(read.statuses)}` : ''}`,
          );
        }
        const bareMedian = medianRound(rounds.map((r) => ({ figures: r.bare, ratio: r.bare.rps }))).figures;
        out['deployment: bare Fastify'] = {
          ...bareMedian,
          name: 'bare Fastify (deployment-mode rounds)',
          ratio: 1,
          note: `median of ${ratioRounds} rounds`,
        };
        const health = medianRound(
          rounds.map((r) => ({ figures: r.health, ratio: r.health.rps / Math.max(r.bare.rps, 1) })),
        );
        out['healthz-deployment'] = {
          ...health.figures,
          name: '/healthz (deployment mode)',
          ratio: Math.round(health.ratio * 1000) / 1000,
          note: `median round; rounds ${health.ratios.join(', ')}`,
        };
        console.log(
          `  ${label}: /healthz (deployment ` +
            `mode): ${health.figures.rps}/s, ${out['healthz-deployment'].ratio} of bare Fastify ` +
            `(rounds ${health.ratios.join(', ')})`,
        );
        const readRatios = rounds.map((r) => r.read.rps / Math.max(r.bare.rps, 1));
        const sorted = readRatios.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
        const mid = sorted[Math.floor((sorted.length - 1) / 2)]![1];
        const readMedian = rounds[mid]!.read;
        const all429 = rounds.reduce((a, r) => a + r.read.tooManyRequests, 0);
        const allNon2xx = rounds.reduce((a, r) => a + r.read.non2xx, 0);
        report('read-deployment', {
          ...readMedian,
          tooManyRequests: all429,
          non2xx: allNon2xx,
          valid: all429 === 0 && allNon2xx === 0,
          ratio: Math.round(readRatios[mid]! * 1000) / 1000,
          note:
            `median round; rounds ${readRatios.map((x) => Math.round(x * 1000) / 1000).join(', ')}; 429s and ` +
            `non-2xx over all rounds`,
        });
      } catch (err) {
        failed('read-deployment', readSpec.name, err);
      }
    }
    const pgbenchTps: number | undefined = results.pgbench?.writeTps || undefined;
    for (const spec of writeSpecs) {
      if (!wants(spec.id)) continue;
      const target = targetOf(spec.id)!.target;
      // Twice the target of pgbench -N, or of an assumed 3,000 tx/s without it (embedded only).
      const expected = Math.max(
        200,
        (pgbenchTps ?? Number(process.env.BENCH_ASSUMED_PGBENCH ?? 3000)) * target * spreadHeadroom,
      );
      try {
        const pool = await preparePool(server, spec, expected, durationSeconds);
        await settle();
        const before = await groupCommitCounts(server);
        const f: Spread = await loadPool(server.publicUrl, pool, durationSeconds);
        const after = await groupCommitCounts(server);
        if (pgbenchTps && databaseUrl) f.ofPgbench = Math.round((f.rps / pgbenchTps) * 1000) / 1000;
        const batches = after.batches - before.batches;
        console.log(
          `    ${spec.id}: group commit ${after.writes - before.writes} writes in ${batches} batches ` +
            `(${batches ? Math.round(((after.writes - before.writes) / batches) * 10) / 10 : 0} a batch)`,
        );
        report(spec.id, f);
      } catch (err) {
        failed(spec.id, spec.name, err);
      }
    }
  } finally {
    out.deploymentMode.logBytes = server.logBytes() - logBefore;
    await server.stop();
  }
}

/** The group committer's counters (/metrics): batches and the writes in them since start-up. */
async function groupCommitCounts(server: BenchServer): Promise<{ batches: number; writes: number }> {
  const text = await (
    await fetch(`${server.adminUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } })
  ).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { batches: value('group_commit_batches_total'), writes: value('group_commit_writes_total') };
}

/** Issue 37's targets: of pgbench -N (writes) or of bare Fastify (deployment-mode reads). */
const targets = [
  { id: 'deposits-spread', of: 'pgbench -N', target: 0.45 },
  { id: 'members', of: 'pgbench -N', target: 0.45 },
  { id: 'withdrawals', of: 'pgbench -N', target: 0.3 },
  { id: 'exchange', of: 'pgbench -N', target: 0.3 },
  { id: 'remittance', of: 'pgbench -N', target: 0.3 },
  { id: 'card-topups', of: 'pgbench -N', target: 0.3 },
  { id: 'deposits-one', of: 'pgbench -N', target: 0.45 },
  { id: 'healthz-deployment', of: 'bare Fastify', target: 0.8 },
  { id: 'read-deployment', of: 'bare Fastify', target: 1 / 3 },
] as const;
function targetOf(id: string) {
  return targets.find((t) => t.id === id);
}

const started = loadavg();
let results: Record<string, any> = {};
results = {
  date: new Date().toISOString(),
  node: process.version,
  seconds: durationSeconds,
  warmupSeconds,
  settleSeconds,
  connections,
  loadavgBefore: started,
  figures: [...selected],
};
const only = process.env.BENCH_DB; // 'embedded' or 'postgres' to run one of the two

console.log(`load average ${started.map((l) => l.toFixed(2)).join(' ')}; figures: ${[...selected].join(', ')}`);

const toClean: string[] = [];
const suiteIds = figureIds.filter((id) => id !== 'webhooks');
if (only !== 'embedded') {
  const pgbench = findPgbench();
  const pgbenchDb = pgbench ? await freshPostgres() : undefined;
  if (pgbench && pgbenchDb) {
    toClean.push(pgbenchDb);
    results.pgbench = runPgbench(pgbench, pgbenchDb, connections, durationSeconds);
    console.log(`pgbench -N: ${results.pgbench.writeTps} tx/s, -S -M prepared: ${results.pgbench.readTps} reads/s`);
  } else console.log('pgbench: not found (or PostgreSQL unreachable), skipped');
  if (wants(...suiteIds)) {
    const pgUrl = await freshPostgres();
    // The deployment-mode server gets a database of its own: nothing the scaled figures left in it.
    const pgDeploy = wants('read-deployment', ...writeSpecs.map((w) => w.id)) ? await freshPostgres() : undefined;
    for (const u of [pgUrl, pgDeploy]) if (u) toClean.push(u);
    if (pgUrl) results.postgres = await runSuite('PostgreSQL', pgUrl, pgDeploy);
  }
  if (wants('webhooks')) {
    const pgWebhooks = await freshPostgres();
    if (pgWebhooks) {
      toClean.push(pgWebhooks);
      results.postgres ??= {};
      results.postgres.webhooks = await benchWebhookDeliveries(pgWebhooks, durationSeconds);
      console.log(`  PostgreSQL: webhook deliveries ${results.postgres.webhooks.perSecond}/s`);
    }
  }
}
if (only !== 'postgres') {
  // Embedded: the scaled figures in memory as before; the deployment mode with no DATABASE_URL (PGlite in DATA_DIR).
  if (wants(...suiteIds)) results.embedded = await runSuite('Embedded (PGlite)', 'memory://', undefined);
  if (wants('webhooks')) {
    results.embedded ??= {};
    results.embedded.webhooks = await benchWebhookDeliveries('memory://', durationSeconds);
    console.log(`  Embedded: webhook deliveries ${results.embedded.webhooks.perSecond}/s`);
  }
}
for (const url of toClean) await dropDatabase(url);
results.loadavgAfter = loadavg();

// One table: every figure, its ratio, and embedded against PostgreSQL.
const skip = new Set(['webhooks', 'deploymentMode']);
const names = [...new Set([...Object.keys(results.postgres ?? {}), ...Object.keys(results.embedded ?? {})])].filter(
  (n) => !skip.has(n),
);
const table: Record<string, Record<string, string | number>> = {};
const r3 = (x: number) => Math.round(x * 1000) / 1000;
for (const n of names) {
  const p = results.postgres?.[n];
  const e = results.embedded?.[n];
  table[p?.name ?? e?.name ?? n] = {
    'PostgreSQL /s': p?.rps ?? '',
    'PG ratio': p?.ofPgbench !== undefined ? `${p.ofPgbench} of pgbench` : (p?.ratio ?? ''),
    'embedded /s': e?.rps ?? '',
    'emb ratio': e?.ratio ?? '',
    'emb / PG': p && e && p.rps ? Math.round((e.rps / p.rps) * 100) / 100 : '',
    'p50/p99 ms (PG)': p && p.p50 !== undefined ? `${p.p50}/${p.p99}` : '',
    'non-2xx': `${p?.non2xx ?? ''}/${e?.non2xx ?? ''}`,
    '429s':
      p?.tooManyRequests !== undefined || e?.tooManyRequests !== undefined
        ? `${p?.tooManyRequests ?? ''}/${e?.tooManyRequests ?? ''}`
        : '',
  };
}
const pw = results.postgres?.webhooks;
const ew = results.embedded?.webhooks;
if (pw || ew)
  table['webhook deliveries/s (local receiver)'] = {
    'PostgreSQL /s': pw?.perSecond ?? '',
    'PG ratio': '',
    'embedded /s': ew?.perSecond ?? '',
    'emb ratio': '',
    'emb / PG': pw && ew ? Math.round((ew.perSecond / pw.perSecond) * 100) / 100 : '',
  };
if (results.pgbench) {
  const dep = results.postgres?.['signed POST /v1/deposits (one merchant)'];
  table['pgbench -N (tx/s)'] = {
    'PostgreSQL /s': results.pgbench.writeTps,
    'PG ratio': dep ? `deposit/pgbench ${r3(dep.rps / results.pgbench.writeTps)}` : '',
  };
  table['pgbench -S -M prepared (reads/s)'] = { 'PostgreSQL /s': results.pgbench.readTps };
}
console.log(
  `\n${connections} connections, ${durationSeconds} s per figure after ${warmupSeconds} s of warm-up ` +
    `(${settleSeconds} s of pause before each write figure), Node ${process.version}; load average ` +
    `before ${started.map((l) => l.toFixed(2)).join(' ')}, ` +
    `after ${results.loadavgAfter.map((l: number) => l.toFixed(2)).join(' ')}`,
);
console.table(table);

// Issue 37's targets: each figure on PostgreSQL against its yardstick, PASS/FAIL, and the embedded figure of each write
// against PostgreSQL's (≥ 0.25).
const writeIds = new Set<string>([...writeSpecs.map((w) => w.id), 'deposits-one']);
const pickFigure = (suite: Record<string, any> | undefined, id: string) =>
  suite?.[id === 'deposits-one' ? 'signed POST /v1/deposits (one merchant)' : id];
const verdict = (ok: boolean, f: any) => {
  if (!f || f.setupError) return f?.setupError ? 'NOT MEASURED (set-up failed)' : 'not run';
  if (f.tooManyRequests || f.non2xx || f.errors)
    return `INVALID (${f.tooManyRequests ?? 0} × 429, ${f.non2xx} non-2xx)`;
  return ok ? 'PASS' : 'FAIL';
};
const targetTable: Record<string, Record<string, string | number>> = {};
for (const t of targets) {
  if (!wants(t.id === 'healthz-deployment' ? 'read-deployment' : t.id)) continue;
  const p = pickFigure(results.postgres, t.id);
  const e = pickFigure(results.embedded, t.id);
  const pgRatio =
    p && !p.setupError
      ? t.of === 'pgbench -N'
        ? results.pgbench?.writeTps
          ? p.rps / results.pgbench.writeTps
          : undefined
        : p.ratio
      : undefined;
  const embOfPg = writeIds.has(t.id) && p?.rps && e && !e.setupError ? e.rps / p.rps : undefined;
  targetTable[t.id] = {
    'PostgreSQL /s': p?.rps ?? '',
    ratio: pgRatio !== undefined ? r3(pgRatio) : '',
    of: t.of,
    target: `≥ ${r3(t.target)}`,
    'PG verdict': pgRatio !== undefined ? verdict(pgRatio >= t.target, p) : p ? verdict(false, p) : 'not run',
    '429s (PG)': p?.tooManyRequests ?? (p ? 0 : ''),
    'embedded /s': e?.rps ?? '',
    'emb / PG (≥ 0.25)': embOfPg !== undefined ? `${r3(embOfPg)} ${verdict(embOfPg >= 0.25, e)}` : '',
    mode:
      t.id === 'deposits-one'
        ? 'scaled quotas, one merchant'
        : t.id === 'healthz-deployment'
          ? 'deployment (no quota)'
          : `deployment, ${p?.merchants ?? e?.merchants ?? '?'} merchants`,
  };
}
if (Object.keys(targetTable).length) {
  const scaledH = results.postgres?.['/healthz'];
  const scaledR = results.postgres?.['authenticated GET /v1/balances'];
  console.log(
    `\nIssue 37 targets (PostgreSQL, ${connections} connections; pgbench ` +
      `-N ${results.pgbench?.writeTps ?? 'not measured'} tx/s in this run):`,
  );
  console.table(targetTable);
  if (scaledH || scaledR)
    console.log(
      `The existing way (LOG_LEVEL=error, one merchant, RATE_LIMIT_SCALE=100000): ` +
        `/healthz ${scaledH?.ratio ?? '-'} and the read ${scaledR?.ratio ?? '-'} of bare Fastify.`,
    );
  const dm = results.postgres?.deploymentMode ?? results.embedded?.deploymentMode;
  if (dm) {
    const mode =
      dm.entry === 'built'
        ? 'the server built by scripts/build.mjs and run with node --enable-source-maps (as production; ' +
          'dependencies from the repository, not npm ci --omit=dev)'
        : 'src/main.ts through tsx (BENCH_DEPLOY_SERVER=tsx)';
    console.log(
      `Deployment mode: ${mode}; ${dm.env}; ` +
        `request log to a file (${results.postgres?.deploymentMode?.logBytes ?? '-'} bytes on PostgreSQL).`,
    );
  }
  results.targets = targetTable;
}
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
