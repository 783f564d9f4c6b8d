import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface BenchServer {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  adminToken: string;
  stop(): Promise<void>;
}

/** The real service in its own process, so the load generator does not share its event loop. */
export async function startServer(databaseUrl: string): Promise<BenchServer> {
  const adminToken = 'bench-admin-token';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN: adminToken,
      DATABASE_URL: databaseUrl, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-bench-')),
      // Quotas are multiplied so the limiter runs on every request without refusing the load.
      RATE_LIMIT_SCALE: '100000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 600; i++) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    if (m) {
      return {
        child, publicUrl: m[1]!, adminUrl: m[2]!, adminToken,
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

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(name: string, opts: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ connections: 10, duration: 5, ...opts });
  return {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export async function adminCall(server: BenchServer, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}
