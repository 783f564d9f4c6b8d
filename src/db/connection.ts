// Over 300 lines: the two databases (PGlite, node-postgres) behind one Kysely handle, with their pools and LISTEN.
import { mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { Kysely, PostgresDialect, type DatabaseConnection } from 'kysely';
import type { Database } from './schema.js';
import { EmbeddedStatements } from './pglite-statements.js';
import { registerDirectRunner } from './direct.js';
import { parseDatabaseTarget, ServerList } from './hosts.js';
import { tracing } from '../platform/telemetry/telemetry.js';

export type DatabaseKind = 'embedded' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** The embedded database itself (tests take a migrated image of it with `dumpDataDir`). */
  pglite?: PGlite;
  close(): Promise<void>;
  /**
   * Subscribes to a notification channel (LISTEN) on a connection of its own: `onNotify` per
   * notification, `onListening(true)` once listening, `onListening(false)` when the connection is
   * lost (it reconnects every `reconnectMs`). Returns the unsubscribe.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onListening: (listening: boolean) => void,
  ): Promise<() => Promise<void>>;
}

/** Wait between attempts to re-open a lost notification connection. */
export const listenReconnectMs = 1_000;

/**
 * LISTEN on a dedicated node-postgres client, reconnecting while subscribed: to the server list of
 * `DATABASE_URL` (after a failover, the promoted server), or of `DATABASE_LISTEN_URL` when the
 * pool goes through a transaction-mode pooler, which cannot carry a session's LISTEN.
 */
function listenOnPostgres(servers: ServerList) {
  return async (channel: string, onNotify: (payload: string) => void, onListening: (listening: boolean) => void) => {
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const lost = () => {
      if (stopped) return;
      onListening(false);
      client?.removeAllListeners();
      // A late error of the lost connection must find a listener: an unheard 'error' ends the process.
      client?.on('error', () => {});
      void client?.end().catch(() => {});
      client = undefined;
      retry ??= setTimeout(() => {
        retry = undefined;
        void connect();
      }, listenReconnectMs);
    };
    const connect = async () => {
      let c: pg.Client | undefined;
      try {
        c = await servers.connectClient();
        if (stopped) {
          await c.end().catch(() => {});
          return;
        }
        client = c;
        c.on('notification', (n) => onNotify(n.payload ?? ''));
        c.on('error', lost);
        c.on('end', lost);
        await c.query(`LISTEN ${channel}`);
        if (!stopped && client === c) onListening(true);
      } catch {
        if (!c || client === c) lost();
        else void c.end().catch(() => {});
      }
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      c?.removeAllListeners();
      c?.on('error', () => {});
      await c?.end().catch(() => {});
    };
  };
}

/** No notification connection (behind a transaction-mode pooler without DATABASE_LISTEN_URL): the caches stay
 * untrusted. */
const neverListening: DatabaseHandle['listen'] = async (_channel, _onNotify, onListening) => {
  onListening(false);
  return async () => {};
};

export interface OpenOptions {
  /** Connections to a PostgreSQL server (config `databasePoolMax`); the embedded database has one. */
  poolMax?: number;
  /** In-memory embedded database only: start from this image (`PGlite.dumpDataDir`) instead of an empty cluster. */
  embeddedImage?: Blob;
  /**
   * `transaction`: the URL reaches PostgreSQL through a transaction-mode pooler (PgBouncer), so no
   * state may outlive a transaction: statements are sent unnamed (config `databasePooler`).
   */
  pooler?: 'none' | 'transaction';
  /**
   * Where the notification connection goes (config `databaseListenUrl`); by default the
   * `DATABASE_URL`, except behind a transaction-mode pooler, where nothing listens (every request
   * reads the database instead of the caches: notified-cache.ts).
   */
  listenUrl?: string;
}

/** Data statements, which both databases run prepared; DDL and transaction control run as sent. */
const preparable = /^\s*(select|insert|update|delete|with)\b/i;

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

  private readonly statements: EmbeddedStatements;

  constructor(private readonly pglite: PGlite) {
    this.statements = new EmbeddedStatements(pglite);
  }

  async connect() {
    if (this.busy) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.busy = true;
    const pglite = this.pglite;
    const statements = this.statements;
    return {
      query: async (sql: string, params: readonly unknown[]) => {
        // Data statements prepared once (pglite-statements.ts); DDL and transaction control as they are.
        if (preparable.test(sql) && statements.canPrepare(sql)) return statements.run(sql, params);
        const res = await pglite.query(sql, params as unknown[]);
        return {
          command: (res as { command?: string }).command ?? 'SELECT',
          rowCount: res.affectedRows ?? res.rows.length,
          rows: res.rows,
        };
      },
      release: () => this.release(),
    };
  }

  /** One statement on the connection, in its turn (`readRowsByKey`, direct.ts). */
  async run(text: string, values: readonly unknown[]) {
    const connection = await this.connect();
    try {
      return await connection.query(text, values);
    } finally {
      connection.release();
    }
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

const preparedStatementsPerConnectionMax = 500;

interface PreparedClient {
  query(text: unknown, values?: unknown[]): Promise<pg.QueryResult>;
  release(destroy?: boolean): void;
}
const statementNamesCachedMax = 2_000;

/**
 * Presents a node-postgres pool whose clients run data statements as named prepared statements
 * (named by a hash of their text). PostgreSQL then plans each statement shape once per connection
 * instead of on every call: planning was most of the cost of the hot-path statements. Bounded per
 * connection; DDL and transaction control run unnamed.
 */
class PreparingPool {
  private readonly wrappers = new WeakMap<pg.PoolClient, PreparedClient>();
  /** Statement text → its name: hashing the text cost every query a few per cent of a read's CPU. */
  private readonly names = new Map<string, string>();

  /**
   * `servers`: a failed checkout is tried again while the list moved to another server meanwhile
   * (the server that refused was a standby, or gone), once per server. `named`: false behind a
   * transaction-mode pooler, where a statement prepared on one server connection is unknown to
   * the next transaction's.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly servers?: ServerList,
    private readonly named = true,
  ) {}

  private async checkout(): Promise<pg.PoolClient> {
    for (let attempt = 1; ; attempt++) {
      const moves = this.servers?.moves ?? 0;
      try {
        return await this.pool.connect();
      } catch (err) {
        if (!this.servers || attempt >= this.servers.size || this.servers.moves === moves) throw err;
      }
    }
  }

  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `s${createHash('sha1').update(text).digest('base64url')}`;
      if (this.names.size < statementNamesCachedMax) this.names.set(text, name);
    }
    return name;
  }

  get options() {
    return this.pool.options;
  }

  async connect() {
    const client = await this.checkout();
    let wrapper: PreparedClient | undefined = this.wrappers.get(client);
    if (!wrapper) {
      const names = new Set<string>();
      const nameOf = (text: string) => this.nameOf(text);
      const named = this.named;
      wrapper = {
        query(text: unknown, values?: unknown[]): Promise<pg.QueryResult> {
          if (typeof text !== 'string' || !named || !preparable.test(text)) return client.query(text as string, values);
          const name = nameOf(text);
          if (!names.has(name)) {
            if (names.size >= preparedStatementsPerConnectionMax) return client.query(text, values);
            names.add(name);
          }
          return client.query({ name, text, values });
        },
        release: (destroy?: boolean) => client.release(destroy),
      };
      this.wrappers.set(client, wrapper);
    }
    return wrapper;
  }

  /** One statement on a pooled connection (`readRowsByKey`, direct.ts). */
  async run(text: string, values: readonly unknown[]) {
    const client = await this.connect();
    try {
      return await client.query(text, values as unknown[]);
    } finally {
      client.release();
    }
  }

  end() {
    return this.pool.end();
  }
}

export async function openDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  options: OpenOptions = {},
): Promise<DatabaseHandle> {
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    // Idle connections are kept (at most `poolMax`): an idle timeout costs every checkout and
    // release a timer set and cleared, ~1 % of a read's CPU, to close connections the next burst reopens.
    const target = parseDatabaseTarget(databaseUrl);
    if (!target)
      throw new Error(
        'DATABASE_URL is not a postgres:// URL this service can read (host list, target_session_attrs any, ' +
          'read-write or primary)',
      );
    const servers = new ServerList(target);
    // Each new connection goes to the list's current server (hosts.ts); the hook refuses a standby.
    const pgPool = new pg.Pool({
      Client: servers.clientClass(),
      onConnect: servers.onConnect,
      max: options.poolMax ?? 10,
      idleTimeoutMillis: 0,
    } as unknown as pg.PoolConfig);
    // An idle connection the server ends (restart, failover, an operator's pg_terminate_backend)
    // is an 'error' event of the pool; unhandled, it would end the whole process. node-postgres
    // drops that connection from the pool and the next checkout opens a new one, so there is
    // nothing to do here: statements in flight fail on their own connection and are answered.
    pgPool.on('error', () => {});
    const pooled = options.pooler === 'transaction';
    const pool = new PreparingPool(pgPool, servers, !pooled);
    // A span per statement when tracing is on (telemetry.ts); the pool as it is otherwise.
    tracing()?.traceStatements(pool, false);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }) });
    registerDirectRunner(db, (text, values) => pool.run(text, values));
    const listenTarget = options.listenUrl ? parseDatabaseTarget(options.listenUrl) : pooled ? undefined : target;
    if (options.listenUrl && !listenTarget)
      throw new Error('DATABASE_LISTEN_URL is not a postgres:// URL this service can read');
    const listen = listenTarget ? listenOnPostgres(new ServerList(listenTarget)) : neverListening;
    return { db, kind: 'postgres', close: () => db.destroy(), listen };
  }
  let pglite: PGlite;
  if (databaseUrl === 'memory://') {
    pglite = await PGlite.create({
      parsers: pgliteParsers,
      ...(options.embeddedImage ? { loadDataDir: options.embeddedImage } : {}),
    });
  } else {
    mkdirSync(`${dataDir}/pgdata`, { recursive: true });
    pglite = await PGlite.create({ dataDir: `${dataDir}/pgdata`, parsers: pgliteParsers });
  }
  const pool = new PGlitePool(pglite);
  tracing()?.traceStatements(pool, true);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
  });
  registerDirectRunner(db, (text, values) => pool.run(text, values));
  // The one connection delivers the notifications of its own commits (in-process, never lost).
  const listen = async (
    channel: string,
    onNotify: (payload: string) => void,
    onListening: (listening: boolean) => void,
  ) => {
    const unsubscribe = await pglite.listen(channel, onNotify);
    onListening(true);
    return async () => {
      onListening(false);
      await unsubscribe().catch(() => {});
    };
  };
  return { db, kind: 'embedded', pglite, close: () => db.destroy(), listen };
}

/**
 * A short-lived handle on a direct URL (no pooler), for the migrations behind a transaction-mode
 * pooler: Kysely's Migrator holds a session advisory lock across its transaction, which a pooler
 * that lends a server connection per transaction neither keeps nor releases (two replicas would
 * migrate at once, and the lock would stay on a pooled server connection). Close it after use.
 */
export function openDirectDatabase(url: string): { db: Kysely<Database>; close: () => Promise<void> } {
  const target = parseDatabaseTarget(url);
  if (!target) throw new Error('the direct database URL is not a postgres:// URL this service can read');
  const servers = new ServerList(target);
  const pgPool = new pg.Pool({
    Client: servers.clientClass(),
    onConnect: servers.onConnect,
    max: 1,
  } as unknown as pg.PoolConfig);
  pgPool.on('error', () => {});
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new PreparingPool(pgPool, servers, false) as unknown as pg.Pool }),
  });
  return { db, close: () => db.destroy() };
}

export type { DatabaseConnection };
