/**
 * Throw-away PostgreSQL clusters for the failover checks (scripts/failover/run.ts): a primary and a
 * synchronous streaming standby made with the server's own tools (initdb, pg_basebackup, pg_ctl),
 * in a temporary directory, on free ports. Run as root (CI), the tools run as the `postgres` user
 * (initdb refuses root).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

function binDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin/initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(base, versions[0], 'bin');
  }
  const r = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (r.status === 0) return r.stdout.trim();
  throw new Error('PostgreSQL server tools (initdb, pg_ctl, pg_basebackup) not found: set PG_BINDIR');
}

const asRoot = process.getuid?.() === 0;

function owner(): { uid: number; gid: number } | undefined {
  if (!asRoot) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0) throw new Error('running as root needs a `postgres` user to run the PostgreSQL tools as');
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

export async function freePort(from: number): Promise<number> {
  for (let port = from; port < from + 200; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port from ${from}`);
}

export class Cluster {
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly runAs: { uid: number; gid: number } | undefined,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/mwa`;
  }

  tool(tool: string, args: string[], timeoutMs = 120_000): string {
    const [cmd, argv] = this.runAs
      ? ['runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args]]
      : [join(this.bin, tool), args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: timeoutMs });
    if (r.status !== 0)
      throw new Error(`${tool} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }

  start(): void {
    this.tool('pg_ctl', ['-D', this.dir, '-l', `${this.dir}.log`, '-w', '-t', '60', 'start']);
  }

  /** `-m immediate`: the server's processes quit at once, as when its machine dies (no checkpoint, no goodbye to
   * clients). */
  stopImmediate(): void {
    this.tool('pg_ctl', ['-D', this.dir, '-m', 'immediate', '-w', 'stop']);
  }

  stopFast(): void {
    try {
      this.tool('pg_ctl', ['-D', this.dir, '-m', 'fast', '-w', '-t', '30', 'stop']);
    } catch {
      // not running
    }
  }

  promote(): void {
    this.tool('pg_ctl', ['-D', this.dir, '-w', 'promote']);
  }

  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], database = 'mwa'): Promise<R[]> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: this.port,
      user: 'postgres',
      database,
      connectionTimeoutMillis: 3_000,
    });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** One primary (database `mwa`), no standby: the process-kill measurement (kill-process.ts). */
export async function makeOne(): Promise<{ server: Cluster; cleanup(): void }> {
  const bin = binDir();
  const runAs = owner();
  const root = mkdtempSync(join(tmpdir(), 'mwa-kill-'));
  if (runAs) chownSync(root, runAs.uid, runAs.gid);
  const server = new Cluster('primary', join(root, 'primary'), await freePort(5440), bin, runAs);
  const cleanup = () => {
    server.stopFast();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    server.tool('initdb', [
      '-D',
      server.dir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    appendFileSync(
      join(server.dir, 'postgresql.conf'),
      `\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${root}'\nport ` +
        `= ${server.port}\nmax_connections = 100\n`,
    );
    server.start();
    await server.query('CREATE DATABASE mwa', [], 'postgres');
    return { server, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

export interface Pair {
  root: string;
  primary: Cluster;
  standby: Cluster;
  cleanup(): void;
}

/**
 * A primary (database `mwa`) and a standby streaming from it synchronously: the primary's commit
 * returns once the standby has flushed it (`synchronous_commit = on`, `synchronous_standby_names`
 * naming the standby), so a commit acknowledged by the primary survives its loss. Only the primary
 * names a synchronous standby: once promoted, the standby has none to wait for.
 */
export async function makePair(): Promise<Pair> {
  const bin = binDir();
  const runAs = owner();
  const root = mkdtempSync(join(tmpdir(), 'mwa-failover-'));
  if (runAs) chownSync(root, runAs.uid, runAs.gid);
  const [p1] = [await freePort(5440)];
  const p2 = await freePort(p1 + 1);
  const primary = new Cluster('primary', join(root, 'primary'), p1, bin, runAs);
  const standby = new Cluster('standby', join(root, 'standby'), p2, bin, runAs);
  const pair: Pair = {
    root,
    primary,
    standby,
    cleanup() {
      standby.stopFast();
      primary.stopFast();
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    primary.tool('initdb', [
      '-D',
      primary.dir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    const common = [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      'wal_level = replica',
      'max_wal_senders = 10',
      'hot_standby = on',
      'synchronous_commit = on',
      'shared_buffers = 32MB',
      'max_connections = 100',
      "log_min_messages = 'warning'",
    ];
    appendFileSync(join(primary.dir, 'postgresql.conf'), `\n${[...common, `port = ${p1}`].join('\n')}\n`);
    primary.start();
    await primary.query('CREATE DATABASE mwa', [], 'postgres');
    primary.tool('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(p1),
      '-U',
      'postgres',
      '-D',
      standby.dir,
      '-X',
      'stream',
      '-R',
      '--no-sync',
      '--checkpoint=fast',
    ]);
    appendFileSync(join(standby.dir, 'postgresql.conf'), `\nport = ${p2}\n`);
    appendFileSync(
      join(standby.dir, 'postgresql.auto.conf'),
      `\nprimary_conninfo = 'host=127.0.0.1 port=${p1} user=postgres application_name=standby1'\n`,
    );
    standby.start();
    // Synchronous from now on: named on the primary alone (ALTER SYSTEM lives in its own data directory).
    await primary.query("ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
    await primary.query('SELECT pg_reload_conf()');
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await primary.query<{ sync_state: string }>(
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'",
      );
      if (rows[0]?.sync_state === 'sync') break;
      if (Date.now() > deadline) throw new Error(`the standby did not become synchronous: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return pair;
  } catch (err) {
    pair.cleanup();
    throw err;
  }
}
