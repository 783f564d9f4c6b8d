import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { MerchantWalletClient, signRequest, type MerchantWalletClientOptions } from '@merchant-wallet/sdk';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface BenchServer {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  adminToken: string;
  stop(): Promise<void>;
}

/** The real service in its own process, so the load generator does not share its event loop. */
export async function startServer(
  databaseUrl: string,
  extraEnv: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<BenchServer> {
  const adminToken = 'bench-admin-token';
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'error',
      ADMIN_TOKEN: adminToken,
      DATABASE_URL: databaseUrl,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-bench-')),
      // Quotas are multiplied so the limiter runs on every request without refusing the load.
      RATE_LIMIT_SCALE: '100000',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // Up to two minutes: a first start on a busy machine (migrations on an empty database) is slow.
  for (let i = 0; i < 2400; i++) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    if (m) {
      return {
        child,
        publicUrl: m[1]!,
        adminUrl: m[2]!,
        adminToken,
        async stop() {
          child.kill('SIGTERM');
          await once(child, 'exit');
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${out}`);
}

/**
 * Where the deployment-mode server's build goes: bench/.build/dist (ignored by git; inside the
 * repository so that the bundle's imports resolve from the repository's node_modules, as
 * dist/main.js's do).
 */
const deploymentOutdir = join(root, 'bench', '.build', 'dist');
let built: 'built' | 'tsx' | undefined;

/**
 * How the deployment-mode server runs: `built` (default) as production does, `node
 * --enable-source-maps main.js` from a build of src/ made once per bench run by
 * scripts/build.mjs; `BENCH_DEPLOY_SERVER=tsx` runs src/main.ts through tsx instead (as the
 * scaled server always does). Production also installs with `npm ci --omit=dev`; the bench uses
 * the repository's node_modules.
 */
export function deploymentEntry(): 'built' | 'tsx' {
  if (built) return built;
  if (process.env.BENCH_DEPLOY_SERVER === 'tsx') return (built = 'tsx');
  const started = performance.now();
  execFileSync(process.execPath, ['scripts/build.mjs', '--outdir', deploymentOutdir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  console.log(`  built the server into bench/.build/dist (${Math.round(performance.now() - started)} ms)`);
  return (built = 'built');
}

export interface DeploymentServer extends BenchServer {
  /** The file the server's stdout (its request log) goes to, and its size so far. */
  logFile: string;
  logBytes(): number;
  entry: 'built' | 'tsx';
}

/**
 * The service as a deployment runs it: the default configuration (no LOG_LEVEL, so `info` and a
 * JSON line per request; no RATE_LIMIT_SCALE, so the quotas of docs/rate-limits.md as they are;
 * every other default too), only the listeners on free ports, a fixed operator token and a data
 * directory of its own set. `databaseUrl` undefined: the default embedded database in DATA_DIR.
 * Its stdout (the request log) goes to a file, as a log collector would take it, not through a
 * pipe into this process.
 */
export async function startDeploymentServer(databaseUrl: string | undefined): Promise<DeploymentServer> {
  const adminToken = 'bench-admin-token';
  const entry = deploymentEntry();
  const dataDir = mkdtempSync(join(tmpdir(), 'mwa-bench-deploy-'));
  const logFile = join(dataDir, 'stdout.log');
  const fd = openSync(logFile, 'w');
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    ADMIN_PORT: '0',
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDir,
  };
  for (const name of ['LOG_LEVEL', 'RATE_LIMIT_SCALE', 'DATABASE_URL', 'NODE_ENV']) delete env[name];
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  // BENCH_SERVER_NODE_ARGS: extra node flags for the server (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [
    ...extra,
    ...(entry === 'built'
      ? ['--enable-source-maps', join(deploymentOutdir, 'main.js')]
      : ['--import', 'tsx', 'src/main.ts']),
  ];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', fd, 'inherit'] });
  closeSync(fd);
  const exited = once(child, 'exit');
  for (let i = 0; i < 2400 && child.exitCode === null; i++) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(readFileSync(logFile, 'utf8'));
    if (m) {
      return {
        child,
        publicUrl: m[1]!,
        adminUrl: m[2]!,
        adminToken,
        logFile,
        entry,
        logBytes: () => {
          try {
            return statSync(logFile).size;
          } catch {
            return 0;
          }
        },
        async stop() {
          child.kill('SIGTERM');
          await exited;
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`deployment-mode server did not start: ${readFileSync(logFile, 'utf8').slice(-4000)}`);
}

/** The bare Fastify yardstick (bench/bare-fastify.ts) in its own process. */
export async function startBare(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-fastify.ts'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 400; i++) {
    const m = /bare fastify on (\S+)/.exec(out);
    if (m)
      return {
        url: m[1]!,
        pid: child.pid!,
        async stop() {
          child.kill('SIGTERM');
          await once(child, 'exit');
        },
      };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`bare fastify did not start: ${out}`);
}

/** Load generator connections (the table used 32). */
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * Seconds of the same load before each figure, not counted (`BENCH_WARMUP_SECONDS`, default 1): the
 * figure is the steady state, not the first second of a process (JIT) or of a pool connection
 * (its PostgreSQL backend compiling the posting functions and preparing each statement).
 */
export const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);

export async function load(name: string, opts: autocannon.Options): Promise<Figures> {
  const warmup =
    warmupSeconds > 0 ? { warmup: { connections: opts.connections ?? connections, duration: warmupSeconds } } : {};
  const result = await autocannon({ connections, duration: 5, ...warmup, ...opts });
  return {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** Two loads at once (e.g. one per server process): their sum. */
export async function loadBoth(name: string, a: autocannon.Options, b: autocannon.Options): Promise<Figures> {
  const [x, y] = await Promise.all([
    load(name, { connections: Math.ceil(connections / 2), ...a }),
    load(name, { connections: Math.floor(connections / 2), ...b }),
  ]);
  return {
    name,
    rps: x.rps + y.rps,
    p50: Math.max(x.p50, y.p50),
    p99: Math.max(x.p99, y.p99),
    errors: x.errors + y.errors,
    non2xx: x.non2xx + y.non2xx,
  };
}

/** A set-up step that did not answer 2xx: the figure cannot be measured; its exact answer is reported. */
export class SetupError extends Error {
  constructor(
    readonly step: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${step}: ${status} ${body.slice(0, 600)}`);
  }
}

type OperatorApi = Pick<BenchServer, 'adminUrl' | 'adminToken'>;

/** A call to the operator API; a set-up step, so anything but 2xx is a SetupError. */
export async function adminCall(server: OperatorApi, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new SetupError(`operator ${method} ${path}`, res.status, text);
  return text ? JSON.parse(text) : undefined;
}

/**
 * A merchant made through the operator API, a sandbox key with `scopes`, and an SDK client of that key. The
 * client reaches the server on 127.0.0.1 but names the sandbox host, where the environment comes from.
 */
export async function benchMerchant(
  server: OperatorApi & Pick<BenchServer, 'publicUrl'>,
  name: string,
  scopes: string[],
  clientOptions: Partial<MerchantWalletClientOptions> = {},
) {
  const merchant = await adminCall(server, 'POST', '/admin/v1/merchants', { name });
  const key = await adminCall(server, 'POST', `/admin/v1/merchants/${merchant.id}/api-keys`, {
    environment: 'sandbox',
    scopes,
  });
  const host = `api-sandbox.localhost:${new URL(server.publicUrl).port}`;
  const client = new MerchantWalletClient({
    baseUrl: `http://${host}`,
    connectHost: '127.0.0.1',
    clientId: key.client_id,
    apiKey: key.api_key,
    signingKey: key.signing_key,
    ...clientOptions,
  });
  return { merchant, key, host, client };
}

/** User+system CPU ticks (1/100 s) of a process and its threads so far; 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** Who signs a request: the merchant's API host, access token and signing key. */
export interface Signer {
  host: string;
  token: string;
  signingKey: string;
}

/**
 * autocannon requests: a signed, idempotent POST each (a new key, nonce and timestamp per
 * request); `pick` gives the n-th request's signer and body.
 */
export function signedPosts(path: string, pick: (n: number) => { m: Signer; body: unknown }) {
  let n = 0;
  return [
    {
      setupRequest: (req: any) => {
        const { m, body } = pick(n++);
        const raw = JSON.stringify(body);
        const timestamp = String(Math.floor(Date.now() / 1000));
        const nonce = randomUUID();
        req.method = 'POST';
        req.path = path;
        req.body = raw;
        req.headers = {
          host: m.host,
          authorization: `Bearer ${m.token}`,
          'content-type': 'application/json',
          'x-idempotency-key': randomUUID(),
          'x-timestamp': timestamp,
          'x-nonce': nonce,
          'x-signature': signRequest({
            method: 'POST',
            pathWithQuery: path,
            timestamp,
            nonce,
            rawBody: raw,
            signingKey: m.signingKey,
          }),
        };
        return req;
      },
    },
  ];
}

/** A deposit of 1.5 USDT to the n-th of the merchant's members (round robin), with a new tx_hash. */
export const depositBody = (members: readonly string[], n: number) => ({
  member_id: members[n % members.length],
  asset: 'USDT',
  amount: '1.5',
  tx_hash: `0x${randomUUID()}`,
});
