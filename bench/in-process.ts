/**
 * Separates what the service's process costs from what its request path costs: bare Fastify in
 * a process of its own (the yardstick), the same bare app inside the service's process
 * (bench/in-process-host.ts: same heap, workers, pool and timers), and the service's `/healthz`,
 * measured in turns (`ROUNDS`, default 4; `BENCH_SECONDS`, default 3). `WORKERS=off` starts the
 * service without its background workers. On PostgreSQL (`BENCH_PG_URL`), a scratch database.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { load, startBare } from './support.js';

const pgUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rounds = Number(process.env.ROUNDS ?? 4);
const duration = Number(process.env.BENCH_SECONDS ?? 3);
const admin = new pg.Client({ connectionString: pgUrl });
await admin.connect();
const name = `mwa_inprocess_${Date.now()}_${process.pid}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(pgUrl);
url.pathname = `/${name}`;
const host = spawn(process.execPath, ['--import', 'tsx', 'bench/in-process-host.ts'], {
  env: {
    ...process.env,
    PORT: '0',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'error',
    ADMIN_TOKEN: 'bench-admin-token',
    DATABASE_URL: url.toString(),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-bench-')),
    RATE_LIMIT_SCALE: '100000',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
host.stdout!.on('data', (d: Buffer) => (out += d.toString()));
let urls: RegExpExecArray | null = null;
for (let i = 0; i < 2400 && !(urls = /in-process (\S+) (\S+)/.exec(out)); i++)
  await new Promise((r) => setTimeout(r, 50));
if (!urls) throw new Error(`the in-process host did not start: ${out}`);
const [, serviceUrl, bareInUrl] = urls;
const bare = await startBare();
const ratio = (a: number, b: number) => (a / b).toFixed(3);
for (let i = 0; i < rounds; i++) {
  const b = await load('bare', { url: bare.url, duration });
  const inside = await load('bare in the service process', { url: bareInUrl!, duration });
  const health = await load('/healthz', { url: `${serviceUrl}/healthz`, duration });
  console.log(
    `round ${i + 1}: bare ${b.rps}/s, bare in the service process ${inside.rps}/s ` +
      `(${ratio(inside.rps, b.rps)}), /healthz ${health.rps}/s (${ratio(health.rps, b.rps)} of ` +
      `bare, ${ratio(health.rps, inside.rps)} of bare in the process)`,
  );
}
await bare.stop();
host.kill('SIGTERM');
await once(host, 'exit');
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
