import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase, type DatabaseHandle, type OpenOptions } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/**
 * Migrate once, copy per test file. Creating an embedded cluster (initdb) and migrating it costs
 * seconds, paid by every service a test starts; instead:
 *
 * - embedded (PGlite): the first process builds a migrated image (`dumpDataDir`, a plain tar) under a lock and
 *   keeps it in the temporary directory, keyed by the migrations' text and PGlite's version; every
 *   test service then starts from that image (`migratedImage()`, used by `startTestService`).
 * - PostgreSQL (`TEST_DATABASE_URL`): a template database is migrated once, and each test file gets
 *   its own `CREATE DATABASE ... TEMPLATE`, dropped when the file's process ends
 *   (`isolatePostgresDatabase()`, run for every test process by `npm test`: per-file-database.ts).
 *
 * Services still run the migrations at start, which finds nothing to do on a current copy.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Hash of everything that shapes the migrated schema. */
export function migrationsHash(extra = ''): string {
  const hash = createHash('sha256').update(extra);
  const dir = join(root, 'src/db/migrations');
  const functions = join(root, 'src/db/functions');
  const files = [
    ...readdirSync(dir)
      .sort()
      .map((f) => join(dir, f)),
    // The stored functions are applied after the migrations: an edited file is a new image.
    ...(existsSync(functions)
      ? readdirSync(functions)
          .sort()
          .map((f) => join(functions, f))
      : []),
    join(root, 'src/db/migrate.ts'),
    join(root, 'src/db/sql-script.ts'),
    join(root, 'src/db/stored-functions.ts'),
  ];
  for (const file of files) {
    if (!existsSync(file)) continue;
    hash.update(file.slice(root.length)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function pgliteVersion(): string {
  // import.meta.resolve gives .../@electric-sql/pglite/dist/index.js
  const dir = dirname(dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite'))));
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

const lockStaleMs = 120_000;
const imageWaitMs = 300_000;

/**
 * The image is a plain tar (~29 MB), not gzip (~5 MB): every embedded database of the suite starts
 * from it, and unpacking gzip cost each start ~0.4 s of CPU; the checkpoint before the dump spares
 * each start the replay of the migrations' WAL (together 1.45 → 0.9 s of CPU per start); 16 MB of
 * shared buffers instead of 128 MB spare each start zeroing the rest (0.9 → 0.65 s).
 */
async function buildImage(): Promise<Buffer> {
  const handle = await openDatabase('memory://', tmpdir());
  try {
    await migrateToLatest(handle.db);
    // template0 and template1 are half the image's files (~15 of its 44 MB): nothing in the tests
    // creates a database in an embedded one, and each start unpacks the image (~0.15 s less per start).
    await handle.pglite!.exec(
      "UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')",
    );
    await handle.pglite!.exec('DROP DATABASE template0');
    await handle.pglite!.exec('DROP DATABASE template1');
    // PostgreSQL's default 128 MB of shared buffers is memory each embedded start allocates and
    // zeroes (Emscripten's mmap), ~0.25 s of CPU per start, for a test database of a few MB. Only
    // the buffer cache's size: what the database does is the same.
    await handle.pglite!.exec("ALTER SYSTEM SET shared_buffers = '16MB'");
    await handle.pglite!.exec('CHECKPOINT');
    const blob = await handle.pglite!.dumpDataDir('none');
    return Buffer.from(await blob.arrayBuffer());
  } finally {
    await handle.close();
  }
}

/** Takes the lock file, or answers false while another live builder holds it. */
function tryLock(lock: string): boolean {
  try {
    closeSync(openSync(lock, 'wx'));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    try {
      // A builder that died leaves its lock behind: take it over once it is old.
      if (Date.now() - statSync(lock).mtimeMs > lockStaleMs) unlinkSync(lock);
    } catch {
      // gone meanwhile: the next try takes it
    }
    return false;
  }
}

async function loadOrBuildImage(): Promise<Blob> {
  const imageKind = `pglite ${pgliteVersion()} tar checkpointed without templates shared_buffers 16MB`;
  const file = join(tmpdir(), `mwa-test-db-${migrationsHash(imageKind)}.tar`);
  const lock = `${file}.lock`;
  const deadline = Date.now() + imageWaitMs;
  while (!existsSync(file)) {
    if (tryLock(lock)) {
      try {
        if (!existsSync(file)) {
          const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
          writeFileSync(tmp, await buildImage());
          renameSync(tmp, file);
        }
      } finally {
        try {
          unlinkSync(lock);
        } catch {
          // taken over as stale: nothing to release
        }
      }
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`no migrated database image at ${file} after ${imageWaitMs} ms (lock ${lock})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const bytes = readFileSync(file);
  return new SharedImage(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/**
 * The image's bytes, one copy per process, handed to every start as they are. PGlite reads a
 * `loadDataDir` blob only through `arrayBuffer()` and never writes to it (it copies each file out
 * into its own file system); a plain Blob copies its 29 MB anew at every call (~60 ms of CPU per
 * start, and as much garbage).
 */
class SharedImage extends Blob {
  constructor(private readonly image: ArrayBuffer) {
    super([]);
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.image);
  }
}

let image: Promise<Blob> | undefined;

/** The migrated embedded database image, built once per machine and migration set. */
export function migratedImage(): Promise<Blob> {
  image ??= loadOrBuildImage().catch((err: unknown) => {
    image = undefined;
    throw err;
  });
  return image;
}

/**
 * Puts a migrated embedded database (a copy of the image) where a service started with
 * `DATA_DIR=<dataDir>` and no `DATABASE_URL` keeps its own (`<dataDir>/pgdata`, src/db/connection.ts).
 * For tests of a service process that are not about its first start on an empty database: that
 * start creates the cluster and migrates it (~8 s of CPU); from a seeded DATA_DIR it takes ~3 s,
 * seeding ~1.6 s.
 */
export async function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  const pgdata = join(dataDir, 'pgdata');
  mkdirSync(pgdata, { recursive: true });
  const pglite = await PGlite.create({ dataDir: pgdata, loadDataDir: await migratedImage() });
  await pglite.close();
}

/**
 * The options a test opens the PostgreSQL test database with as the service would: behind a
 * transaction-mode pooler (`DATABASE_POOLER=transaction`, the CI run through PgBouncer) statements
 * go unnamed and LISTEN goes to the direct URL of the file's copy (`TEST_DATABASE_DIRECT_URL`).
 */
export function testDatabaseOptions(): OpenOptions {
  if (process.env.DATABASE_POOLER !== 'transaction') return {};
  return {
    pooler: 'transaction',
    ...(process.env.TEST_DATABASE_DIRECT_URL ? { listenUrl: process.env.TEST_DATABASE_DIRECT_URL } : {}),
  };
}

/** The file's PostgreSQL database without the pooler in between (the same as `TEST_DATABASE_URL` unless it goes through
 * one). */
export function directTestDatabaseUrl(): string {
  return process.env.TEST_DATABASE_DIRECT_URL || process.env.TEST_DATABASE_URL || 'memory://';
}

export interface EndedConnectionsSetup {
  /** The file's database, pooled (`poolMax` connections). */
  handle: DatabaseHandle;
  /** A direct connection to end the pool's connections from (behind a pooler, it could run on one of them). */
  other: DatabaseHandle;
  /** The uncaught exceptions of the process meanwhile: a connection ended must not crash it. */
  crashes: unknown[];
}

/**
 * Runs `run` for a test of connections the server ends (PostgreSQL only): the pooled handle, the
 * direct one and the crashes seen, each closed or unhooked afterwards whatever happens.
 */
export async function withEndedConnections(
  poolMax: number,
  run: (setup: EndedConnectionsSetup) => Promise<void>,
): Promise<void> {
  const handle = await openDatabase(process.env.TEST_DATABASE_URL || 'memory://', '', {
    ...testDatabaseOptions(),
    poolMax,
  });
  const other = await openDatabase(directTestDatabaseUrl(), '', { poolMax: 1 });
  const crashes: unknown[] = [];
  const onCrash = (err: unknown) => crashes.push(err);
  process.on('uncaughtException', onCrash);
  try {
    await run({ handle, other, crashes });
  } finally {
    process.off('uncaughtException', onCrash);
    await handle.close();
    await other.close();
  }
}

/**
 * Where the harness creates, copies and drops databases: `TEST_DATABASE_ADMIN_URL`, a direct
 * connection to the server of `TEST_DATABASE_URL` (same database name) when that one goes through
 * a transaction-mode pooler, which cannot hold the session lock taken below; else `TEST_DATABASE_URL`.
 */
function adminUrlFor(baseUrl: string): string {
  const admin = process.env.TEST_DATABASE_ADMIN_URL;
  return admin ? withDatabase(admin, baseName(baseUrl)) : baseUrl;
}

/** A migrated database for tests that use it without a service: the test database, or a copy of the embedded image. */
export async function openTestDatabase(prefix = 'mwa-db-'): Promise<DatabaseHandle> {
  const url = process.env.TEST_DATABASE_URL || 'memory://';
  const handle = await openDatabase(
    url,
    mkdtempSync(join(tmpdir(), prefix)),
    url === 'memory://' ? { embeddedImage: await migratedImage() } : testDatabaseOptions(),
  );
  await migrateToLatest(handle.db);
  return handle;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Longest prefix of the base name kept in copies' names (PostgreSQL names have at most 63 bytes). */
const baseNameMax = 30;

function baseName(baseUrl: string): string {
  const base = decodeURIComponent(new URL(baseUrl).pathname.slice(1));
  if (!base) throw new Error(`TEST_DATABASE_URL names no database: ${baseUrl}`);
  return base;
}

/**
 * Gives this process a database of its own on the server of `TEST_DATABASE_URL`: a copy of a
 * template migrated once (`<db>_template`, rebuilt when the migrations change), named after the
 * runner's and this process's ids.
 */
export async function isolatePostgresDatabase(
  baseUrl: string,
  runnerPid: number,
): Promise<{ url: string; name: string; directUrl: string }> {
  const base = baseName(baseUrl);
  const template = `${base.slice(0, 54)}_template`;
  const name = `${base.slice(0, baseNameMax)}_r${runnerPid}_f${process.pid}_${randomBytes(3).toString('hex')}`;
  const hash = migrationsHash('postgres');
  const lockKey = `mwa-test-template:${base}`;
  const adminUrl = adminUrlFor(baseUrl);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // One builder at a time per base database, across processes; copies are made under the lock
    // too, so none is taken from a template being rebuilt.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
    const { rows } = await admin.query<{ comment: string | null }>(
      "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
      [template],
    );
    if (rows[0]?.comment !== hash) {
      await admin.query(`DROP DATABASE IF EXISTS ${quote(template)} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${quote(template)}`);
      const handle = await openDatabase(withDatabase(adminUrl, template), tmpdir());
      try {
        await migrateToLatest(handle.db);
      } finally {
        await handle.close();
      }
      await admin.query(`COMMENT ON DATABASE ${quote(template)} IS '${hash}'`);
    }
    await dropCopiesOfEndedRuns(admin, base);
    await admin.query(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(template)}`);
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
  } finally {
    await admin.end();
  }
  return { url: withDatabase(baseUrl, name), name, directUrl: withDatabase(adminUrl, name) };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Copies whose runner process is gone (a test process killed before its exit handler ran). */
async function dropCopiesOfEndedRuns(admin: pg.Client, base: string): Promise<void> {
  const prefix = `${base.slice(0, baseNameMax)}_r`;
  const { rows } = await admin.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [prefix],
  );
  for (const { datname } of rows) {
    const runner = /^_r(\d+)_f\d+_[0-9a-f]{6}$/.exec(datname.slice(prefix.length - 2));
    if (runner && !processAlive(Number(runner[1])))
      await admin.query(`DROP DATABASE IF EXISTS ${quote(datname)} WITH (FORCE)`);
  }
}

/**
 * Drops one copy (`name`), or every copy made for a runner (`runnerPid`). Synchronous, so that it
 * can run in an `exit` handler: a short child process does the work.
 */
export function dropPostgresDatabasesSync(baseUrl: string, which: { name: string } | { runnerPid: number }): void {
  const prefix = 'runnerPid' in which ? `${baseName(baseUrl).slice(0, baseNameMax)}_r${which.runnerPid}_f` : '';
  const exact = 'name' in which ? which.name : '';
  const script = `
    import pg from ${JSON.stringify(import.meta.resolve('pg'))};
    const client = new pg.Client({ connectionString: process.env.MWA_BASE_URL });
    await client.connect();
    const { rows } = await client.query(
      "SELECT datname FROM pg_database WHERE datname = $1 OR ($2 <> '' AND starts_with(datname, $2))",
      [process.env.MWA_DROP_NAME, process.env.MWA_DROP_PREFIX],
    );
    for (const { datname } of rows)
      await client.query('DROP DATABASE IF EXISTS "' + datname.replace(/"/g, '""') + '" WITH (FORCE)');
    await client.end();
  `;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      MWA_BASE_URL: adminUrlFor(baseUrl),
      MWA_DROP_NAME: exact,
      MWA_DROP_PREFIX: prefix,
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (res.status !== 0)
    process.stderr.write(`# could not drop test databases (${exact || `${prefix}*`}): ${res.stderr || res.error}\n`);
}

/** Drops one copy made by `isolatePostgresDatabase` (the pooled worker's, when its file ends). */
export async function dropPostgresDatabase(baseUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrlFor(baseUrl) });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
