/**
 * Paired CPU per request of two versions of the service: `npx tsx bench/paired.ts <old root>
 * [health|read|both|deposit] [postgres|embedded]` (deposit: signed idempotent deposits of one merchant with 20
 * members). Starts the service of `<old root>` (a checkout with
 * its node_modules) and of this checkout, each on its own database, then measures them in turns,
 * seconds apart, under the same load (`ROUNDS`, default 3; `BENCH_SECONDS`, default 3; the order
 * alternates per round). Per figure: requests/s, and the CPU (user + system, from /proc) per
 * request of the server process and, on PostgreSQL, of that database's backends. Throughput on
 * a shared machine swings; CPU per request moves far less.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchMerchant, cpuTicks, depositBody, load, signedPosts } from './support.js';

const oldRoot = resolve(process.argv[2] ?? '/work/main');
const which = process.argv[3] ?? 'both';
const dbKind = process.argv[4] ?? 'postgres';
const rounds = Number(process.env.ROUNDS ?? 3);
const duration = Number(process.env.BENCH_SECONDS ?? 3);
const pgUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const newRoot = fileURLToPath(new URL('..', import.meta.url));
const hz = 100;

const ticks = cpuTicks;

interface Service {
  label: string;
  child: ChildProcess;
  publicUrl: string;
  dbName?: string;
  host: string;
  token: string;
  signingKey: string;
  members: string[];
}

const admin = new pg.Client({ connectionString: pgUrl });
if (dbKind === 'postgres') await admin.connect();

async function start(label: string, root: string): Promise<Service> {
  let databaseUrl = 'memory://';
  let dbName: string | undefined;
  if (dbKind === 'postgres') {
    dbName = `mwa_paired_${label}_${Date.now()}_${process.pid}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    const url = new URL(pgUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
    // NEW_PG_SOCKET=1: the new service reaches PostgreSQL over its Unix socket (one host), the old over pgUrl.
    if (label === 'new' && process.env.NEW_PG_SOCKET)
      databaseUrl = `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/${dbName}`;
  }
  const adminToken = 'bench-admin-token';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'error',
      ADMIN_TOKEN: adminToken,
      DATABASE_URL: databaseUrl,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-paired-')),
      RATE_LIMIT_SCALE: '100000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let m: RegExpExecArray | null = null;
  for (let i = 0; i < 2400 && !m; i++) {
    m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    if (!m) await new Promise((r) => setTimeout(r, 50));
  }
  if (!m) throw new Error(`${label} did not start: ${out}`);
  const [, publicUrl, adminUrl] = m;
  const { key, host, client } = await benchMerchant({ adminUrl: adminUrl!, adminToken, publicUrl: publicUrl! }, 'p', [
    'members:write',
    'balances:read',
    'deposits:write',
  ]);
  const members: string[] = [];
  for (let j = 0; j < 20; j++)
    members.push(((await client.members.create({ external_member_id: `p-${j}` })) as { id: string }).id);
  const token = await client.getToken();
  client.close();
  return { label, child, publicUrl: publicUrl!, dbName, host, token, signingKey: key.signing_key, members };
}

async function backendTicks(s: Service): Promise<number> {
  if (!s.dbName) return 0;
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    s.dbName,
  ]);
  return rows.reduce((sum, r) => sum + ticks(r.pid), 0);
}

type Kind = 'health' | 'read' | 'deposit';

function loadOptions(s: Service, kind: Kind, seconds: number) {
  if (kind === 'health') return { url: `${s.publicUrl}/healthz`, duration: seconds };
  if (kind === 'read')
    return {
      url: `${s.publicUrl}/v1/balances`,
      duration: seconds,
      headers: { host: s.host, authorization: `Bearer ${s.token}`, 'x-on-behalf-of': 'p-0' },
    };
  return {
    url: s.publicUrl,
    duration: seconds,
    requests: signedPosts('/v1/deposits', (n) => ({ m: s, body: depositBody(s.members, n) })),
  };
}

async function measure(s: Service, kind: Kind) {
  const opts = loadOptions(s, kind, duration);
  const server0 = ticks(s.child.pid!);
  const db0 = await backendTicks(s);
  const f = await load(kind, opts);
  const server = ticks(s.child.pid!) - server0;
  const db = (await backendTicks(s)) - db0;
  const requests = Math.max(1, f.rps * duration);
  return {
    rps: f.rps,
    non2xx: f.non2xx,
    serverUs: ((server / hz) * 1e6) / requests,
    dbUs: ((db / hz) * 1e6) / requests,
  };
}

const services = [await start('old', oldRoot), await start('new', newRoot)];
const kinds = (which === 'both' ? ['health', 'read'] : [which]) as Kind[];
// Warm-up (JIT, pools, caches), not counted.
for (const kind of kinds) for (const s of services) await load(kind, loadOptions(s, kind, 2));
const results: Record<string, Array<Awaited<ReturnType<typeof measure>>>> = {};
console.log(
  `paired: old ${oldRoot}, new ${newRoot}, ${dbKind}, ${rounds} rounds of ${duration} s, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
for (let round = 0; round < rounds; round++) {
  for (const kind of kinds) {
    const order = round % 2 === 0 ? services : [...services].reverse();
    for (const s of order) {
      const r = await measure(s, kind);
      (results[`${kind} ${s.label}`] ??= []).push(r);
      console.log(
        `round ${round + 1} ${kind} ${s.label}: ${r.rps}/s, server ${r.serverUs.toFixed(0)} ` +
          `µs/request${s.dbName ? `, PostgreSQL ${r.dbUs.toFixed(0)} µs` : ''}` +
          `${r.non2xx ? `, non2xx ${r.non2xx}` : ''}`,
      );
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, rs] of Object.entries(results)) {
  console.log(
    `median ${name}: ${median(rs.map((r) => r.rps))}/s, ` +
      `server ${median(rs.map((r) => r.serverUs)).toFixed(0)} ` +
      `µs/request${dbKind === 'postgres' ? `, PostgreSQL ${median(rs.map((r) => r.dbUs)).toFixed(0)} µs` : ''}`,
  );
}
console.log(
  `load at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
for (const s of services) {
  s.child.kill('SIGTERM');
  await once(s.child, 'exit');
  if (s.dbName) await admin.query(`DROP DATABASE ${s.dbName} WITH (FORCE)`);
}
if (dbKind === 'postgres') await admin.end();
