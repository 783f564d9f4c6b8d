import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { bundleForTests, bundledPath, newBuildDir, testNodeFlags } from '../../scripts/test-build.mjs';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { rawRequest } from './raw-http.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connection.js';
import { seedEmbeddedDataDir, testDatabaseOptions } from './database.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let entry: Promise<string> | undefined;

/**
 * The service's entry point, src/main.ts, as plain JavaScript: `npm test` bundles it with the test
 * files and passes it in `MWA_SERVICE_ENTRY`; a test file run on its own bundles it once here.
 * Starting it through tsx instead cost each start ~3 s of CPU (the loader, in every process).
 */
export function serviceEntry(): Promise<string> {
  entry ??= (async () => {
    if (process.env.MWA_SERVICE_ENTRY) return process.env.MWA_SERVICE_ENTRY;
    const outdir = newBuildDir('service');
    await bundleForTests({ entryPoints: ['src/main.ts'], outdir });
    return bundledPath(outdir, 'src/main.ts');
  })();
  return entry;
}

/** Runs the service's entry point (src/main.ts) as a process of its own, as `npm start` does (with the tests' Node
 * flags). */
export async function spawnServiceProcess(env: Record<string, string>): Promise<ChildProcess> {
  return spawn(process.execPath, [...testNodeFlags(), await serviceEntry()], {
    cwd: root,
    // The strict response check, as support/service.ts turns it on for the services it starts.
    // Behind PgBouncer (DATABASE_POOLER=transaction in the environment): LISTEN on the file's copy directly.
    env: {
      MWA_STRICT_RESPONSES: 'fail',
      ...process.env,
      ...(process.env.TEST_DATABASE_DIRECT_URL ? { DATABASE_LISTEN_URL: process.env.TEST_DATABASE_DIRECT_URL } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  publicUrl: string;
  adminUrl: string;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Sends SIGTERM: `exited`. */
  stop: () => Promise<number | null>;
}

/**
 * Starts the real service (`src/main.ts`, see `serviceEntry`) as its own process and waits until it listens. The bound
 * is generous: a first start creates the embedded cluster, which takes a while on a busy machine
 * running test files in parallel; a healthy start returns as soon as the line is printed.
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 120_000): Promise<ServiceProcess> {
  const child = await spawnServiceProcess({ PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'warn', ...env });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = /Merchant Wallet API on (\S+) \(operator API on (\S+)\)/.exec(out);
    const stop = () => {
      child.kill('SIGTERM');
      return exited;
    };
    if (m) return { child, publicUrl: m[1]!, adminUrl: m[2]!, output: () => out, exited, stop };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`service did not start:\n${out}`);
}

/** A key as the operator API answers a new one. */
export interface ProcessKey {
  client_id: string;
  api_key: string;
  signing_key: string;
}

/** A POST to the operator API of process `p` with its admin token: the answer's body. */
export async function adminPost(p: ServiceProcess, adminToken: string, path: string, body: unknown): Promise<any> {
  const res = await rawRequest(`${p.adminUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
  });
  return res.body;
}

/** A client of process `p`'s sandbox holding `key`, sending each request once. */
export const processClient = (p: ServiceProcess, key: ProcessKey) =>
  new MerchantWalletClient({
    baseUrl: `http://api-sandbox.localhost:${new URL(p.publicUrl).port}`,
    connectHost: '127.0.0.1',
    clientId: key.client_id,
    apiKey: key.api_key,
    signingKey: key.signing_key,
    maxAttempts: 1,
  });

/**
 * A database of its own for service processes that a test kills and restarts: the test database
 * (TEST_DATABASE_URL) on PostgreSQL, else an embedded one in a new data directory (`mwa-<name>-…`),
 * started migrated (the test is not about a first start); a new admin token. `env`: the processes'
 * environment, with `extra`; `inDatabase(check)`: `check` run on the database opened in the test (once the
 * processes are gone), closed afterwards.
 */
export async function ownServiceDatabase(name: string, extra: Record<string, string>) {
  const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? '';
  const onPostgres = /^postgres(ql)?:\/\//.test(testDatabaseUrl);
  const dataDir = mkdtempSync(join(tmpdir(), `mwa-${name}-`));
  if (!onPostgres) await seedEmbeddedDataDir(dataDir);
  const adminToken = `adm_${randomUUID()}`;
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: onPostgres ? testDatabaseUrl : '',
    ADMIN_TOKEN: adminToken,
    ...extra,
  };
  const open = () => openDatabase(env.DATABASE_URL || undefined, dataDir, testDatabaseOptions());
  const inDatabase = async (check: (db: DatabaseHandle['db']) => Promise<void>) => {
    const handle = await open();
    try {
      await check(handle.db);
    } finally {
      await handle.close();
    }
  };
  return { adminToken, env, inDatabase };
}
