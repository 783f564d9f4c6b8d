/**
 * Quick ratios, seconds apart: bare Fastify, /healthz and the authenticated read on behalf of a
 * member, measured in turns (`ROUNDS`, default 3; `BENCH_SECONDS`, default 3) against one server
 * on PostgreSQL (`BENCH_PG_URL`), both servers started before the first measurement. Prints each
 * round's ratios to bare Fastify and their median. `PROFILE_DIR=...` runs the server under
 * `node --cpu-prof` (the profile is written when it stops).
 */
import { benchMerchant, load, startBare, startServer } from './support.js';
import pg from 'pg';
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** A load and the server's CPU per request it cost (µs). */
async function measured(pid: number, name: string, opts: Parameters<typeof load>[1]) {
  const before = cpuSeconds(pid);
  const f = await load(name, opts);
  const used = cpuSeconds(pid) - before;
  return { ...f, usPerRequest: (used * 1e6) / Math.max(1, f.rps * duration) };
}

const pgUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rounds = Number(process.env.ROUNDS ?? 3);
const duration = Number(process.env.BENCH_SECONDS ?? 3);
const which = process.argv[2] ?? 'both';
const admin = new pg.Client({ connectionString: pgUrl });
await admin.connect();
const name = `mwa_ratio_${Date.now()}_${process.pid}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(pgUrl);
url.pathname = `/${name}`;
const profileDir = process.env.PROFILE_DIR;
const server = await startServer(url.toString(), {}, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
const bare = await startBare();
const { host, client } = await benchMerchant(server, 'p', ['members:write', 'balances:read']);
await client.members.create({ external_member_id: 'p-0' });
const token = await client.getToken();
client.close();
const health: number[] = [];
const read: number[] = [];
for (let i = 0; i < rounds; i++) {
  const b = await measured(bare.pid, 'bare', { url: bare.url, duration });
  const line = [`round ${i + 1}: bare ${b.rps}/s ${b.usPerRequest.toFixed(0)} µs`];
  if (which !== 'read') {
    const h = await measured(server.child.pid!, '/healthz', { url: `${server.publicUrl}/healthz`, duration });
    health.push(h.rps / b.rps);
    line.push(
      `/healthz ${h.rps}/s (${(h.rps / b.rps).toFixed(3)}) ${h.usPerRequest.toFixed(0)} µs, non2xx ${h.non2xx}`,
    );
  }
  if (which !== 'health') {
    const r = await measured(server.child.pid!, 'read', {
      url: `${server.publicUrl}/v1/balances`,
      duration,
      headers: { host, authorization: `Bearer ${token}`, 'x-on-behalf-of': 'p-0' },
    });
    read.push(r.rps / b.rps);
    line.push(`read ${r.rps}/s (${(r.rps / b.rps).toFixed(3)}) ${r.usPerRequest.toFixed(0)} µs, non2xx ${r.non2xx}`);
  }
  console.log(line.join(', '));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
if (health.length) console.log(`median /healthz / bare: ${median(health)!.toFixed(3)}`);
if (read.length) console.log(`median read / bare: ${median(read)!.toFixed(3)}`);
await bare.stop();
await server.stop();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
