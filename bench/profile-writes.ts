/**
 * CPU of a signed deposit load, split by process (the server, PostgreSQL's backends, the load
 * generator), and a CPU profile of the server: `npx tsx bench/profile-writes.ts [merchants]`.
 * Profiles go to PROFILE_DIR (default /tmp/mwa-prof). With `NO_PROF=1` no profile is taken and
 * `NODE_ARGS` are the server's extra Node flags (`--perf-basic-prof` for `perf record -p`: CPU time,
 * where `--cpu-prof` samples wall time and charges the time a process waits for a core to `writev`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { execSync } from 'node:child_process';
import pg from 'pg';
import { benchMerchant, cpuTicks, depositBody, load, signedPosts, startServer, type BenchServer } from './support.js';

const merchantCount = Number(process.argv[2] ?? 10);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const profileDir = process.env.PROFILE_DIR ?? '/tmp/mwa-prof';
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
const name = `mwa_prof_${Date.now()}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = process.env.PROFILE_EMBEDDED
  ? ''
  : process.env.PROFILE_SOCKET
    ? `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/${name}`
    : `postgres://postgres@127.0.0.1:5432/${name}`;
const server: BenchServer = await startServer(
  url,
  {},
  process.env.NO_PROF
    ? process.env.NODE_ARGS
      ? process.env.NODE_ARGS.split(' ')
      : []
    : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
);

async function merchant(i: number) {
  const { host, client, key } = await benchMerchant(server, `p${i}`, [
    'members:write',
    'deposits:write',
    'balances:read',
  ]);
  const members: string[] = [];
  for (let j = 0; j < Number(process.env.MEMBERS ?? 20); j++)
    members.push(((await client.members.create({ external_member_id: `p-${j}` })) as { id: string }).id);
  const token = await client.getToken();
  client.close();
  return { host, token, signingKey: key.signing_key as string, members };
}
const merchants: Awaited<ReturnType<typeof merchant>>[] = [];
for (let i = 0; i < merchantCount; i++) merchants.push(await merchant(i));

const ticks = cpuTicks;
const postgresPids = () =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('postgres');
      } catch {
        return false;
      }
    });
const sample = () => ({
  server: ticks(server.child.pid!),
  me: ticks(process.pid),
  pg: postgresPids().reduce((s, p) => s + ticks(p), 0),
});

const before = sample();
const t0 = performance.now();
const fig = await load('deposits', {
  url: server.publicUrl,
  duration: seconds,
  requests: signedPosts('/v1/deposits', (n) => {
    const m = merchants[n % merchants.length]!;
    return { m, body: depositBody(m.members, Math.floor(n / merchants.length)) };
  }),
});
const wall = (performance.now() - t0) / 1000;
const after = sample();
const hz = Number(execSync('getconf CLK_TCK').toString());
const cpu = (k: 'server' | 'pg' | 'me') => Math.round(((after[k] - before[k]) / hz / wall) * 100);
console.log(JSON.stringify(fig));
console.log(
  `CPU share of one core over ${wall.toFixed(1)} s: server ${cpu('server')} %, PostgreSQL ${cpu('pg')} %, ` +
    `load generator ${cpu('me')} %`,
);
const totalMs = ((after.server - before.server + after.pg - before.pg) / hz) * 1000;
console.log(`server+PostgreSQL CPU per deposit: ${(totalMs / Math.max(1, fig.rps * seconds)).toFixed(2)} ms`);
const metrics = await (
  await fetch(`${server.adminUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } })
).text();
const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
console.log(
  `group commit: ${value('group_commit_writes_total')} writes in ${value('group_commit_batches_total')} ` +
    `transactions, ${value('group_commit_fallbacks_total')} fallbacks`,
);
if (!Number.isNaN(value('nonce_batch_statements_total')))
  console.log(`nonces: ${value('nonce_batch_nonces_total')} in ${value('nonce_batch_statements_total')} statements`);
await server.stop();
if (process.env.KEEP_DB) console.log(`kept database ${name}`);
else await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
