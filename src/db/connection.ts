import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { Kysely, PostgresDialect, type DatabaseConnection } from 'kysely';
import type { Database } from './schema.js';

export type DatabaseKind = 'embedded' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  close(): Promise<void>;
}

// int8 comes back as bigint from both drivers, numeric as string: money never passes through `number`.
pg.types.setTypeParser(20, (v: string) => BigInt(v));
const pgliteParsers = { 20: (v: string) => BigInt(v), 1700: (v: string) => v };

/**
 * PGlite has one connection. This adapter presents it to Kysely's Postgres driver as a pool of
 * size one: `connect()` waits for the previous holder to release, so a transaction owns the
 * connection from BEGIN to COMMIT and statements of concurrent requests never interleave in it.
 */
class PGlitePool {
  private queue: Array<() => void> = [];
  private busy = false;

  constructor(private readonly pglite: PGlite) {}

  async connect() {
    if (this.busy) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.busy = true;
    const pglite = this.pglite;
    return {
      query: async (sql: string, params: readonly unknown[]) => {
        const res = await pglite.query(sql, params as unknown[]);
        return { command: (res as { command?: string }).command ?? 'SELECT', rowCount: res.affectedRows ?? res.rows.length, rows: res.rows };
      },
      release: () => this.release(),
    };
  }

  private release() {
    const next = this.queue.shift();
    if (next) next();
    else this.busy = false;
  }

  async end() {
    await this.pglite.close();
  }
}

export async function openDatabase(databaseUrl: string | undefined, dataDir: string): Promise<DatabaseHandle> {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  let pglite: PGlite;
  if (databaseUrl === 'memory://') {
    pglite = await PGlite.create({ parsers: pgliteParsers });
  } else {
    mkdirSync(`${dataDir}/pgdata`, { recursive: true });
    pglite = await PGlite.create({ dataDir: `${dataDir}/pgdata`, parsers: pgliteParsers });
  }
  const pool = new PGlitePool(pglite);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
  });
  return { db, kind: 'embedded', close: () => db.destroy() };
}

export type { DatabaseConnection };
