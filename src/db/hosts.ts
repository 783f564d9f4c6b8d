import pg from 'pg';

/**
 * A `DATABASE_URL` naming several servers, as libpq reads it
 * (`postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`): node-postgres takes one
 * host only (its URL parser refuses the list; multi-host support is an open pull request,
 * brianc/node-postgres#3643), so the list is resolved here. Each new connection goes to the server
 * that answered last; when that server refuses it, or is not what `target_session_attrs` asks (a
 * standby when a read-write session is wanted), the next one in the list is tried, as libpq does.
 * After a failover the promoted standby is found this way, without a restart (docs/scaling.md).
 */

export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';
const targetSessionAttrs: readonly TargetSessionAttrs[] = ['any', 'read-write', 'primary'];

export interface DatabaseTarget {
  /** One single-host URL per server, in the order given (target_session_attrs removed). */
  urls: string[];
  targetSessionAttrs: TargetSessionAttrs;
}

/** The URL's parts, or undefined when it is not a postgres:// URL that this file (and node-postgres) can read. */
export function parseDatabaseTarget(url: string): DatabaseTarget | undefined {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?$/.exec(url);
  if (!m) return undefined;
  const [, scheme, userinfo, hostList, path, query] = m;
  const params = new URLSearchParams(query ?? '');
  const attrs = params.get('target_session_attrs') ?? 'any';
  if (!targetSessionAttrs.includes(attrs as TargetSessionAttrs)) return undefined;
  // The query as given unless target_session_attrs is taken out of it (node-postgres would pass it on).
  let rest = `${path}${query !== undefined ? `?${query}` : ''}`;
  if (params.has('target_session_attrs')) {
    params.delete('target_session_attrs');
    rest = `${path}${params.size > 0 ? `?${params.toString()}` : ''}`;
  }
  const hosts = hostList!.split(',');
  if (hosts.some((h) => h === '' && hosts.length > 1)) return undefined;
  const urls = hosts.map((h) => `${scheme}${userinfo !== undefined ? `${userinfo}@` : ''}${h}${rest}`);
  for (const u of urls) {
    try {
      new URL(u);
    } catch {
      return undefined;
    }
  }
  return { urls, targetSessionAttrs: attrs as TargetSessionAttrs };
}

/**
 * A server that does not answer (a partition rather than a stopped server, which refuses at once)
 * must not hold a new connection, and so the request waiting for it, for the kernel's minutes:
 * connecting gives up after this long and the next server is tried. Keep-alive probes find a
 * connection whose server vanished silently.
 */
export const connectTimeoutMs = 5_000;
const connectionDefaults = {
  connectionTimeoutMillis: connectTimeoutMs,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
};

/** A server that refused the session: a standby where a read-write session was asked for. */
export class WrongServerError extends Error {
  constructor(
    readonly url: string,
    why: string,
  ) {
    super(`database server ${new URL(url).host} is ${why}; trying the next one of DATABASE_URL`);
  }
}

/**
 * Which server of the list new connections go to. Shared by the pool and the notification
 * connection: the first connection that finds a server gone or read-only moves every later one to
 * the next server (compare-and-set on the index, so a burst of failing connections moves it once).
 */
export class ServerList {
  private index = 0;
  /** Bumped at every move: a checkout that failed while it moved is tried again on the next server. */
  moves = 0;

  constructor(readonly target: DatabaseTarget) {}

  get size(): number {
    return this.target.urls.length;
  }

  current(): { url: string; index: number } {
    return { url: this.target.urls[this.index]!, index: this.index };
  }

  /** The server at `index` failed: the next connection tries the one after it (once per failure). */
  failed(index: number): void {
    if (this.size === 1 || index !== this.index) return;
    this.index = (this.index + 1) % this.size;
    this.moves++;
  }

  /**
   * Refuses a connection to a server that is not what `target_session_attrs` asks for. libpq asks
   * `SHOW transaction_read_only` (read-write) or `pg_is_in_recovery()` (primary); one query answers both.
   */
  async check(client: pg.Client, url: string): Promise<void> {
    if (this.target.targetSessionAttrs === 'any') return;
    const { rows } = await client.query<{ recovery: boolean; read_only: string }>(
      "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only",
    );
    if (rows[0]?.recovery) throw new WrongServerError(url, 'a standby (in recovery)');
    if (this.target.targetSessionAttrs === 'read-write' && rows[0]?.read_only === 'on')
      throw new WrongServerError(url, 'read-only');
  }

  /**
   * A node-postgres Client class for `pg.Pool({ Client })`: each new client connects to the
   * current server and moves the list on when it cannot. The pool's `onConnect` hook runs `check`.
   */
  clientClass(): typeof pg.Client {
    const servers = this;
    // Typed loosely: node-postgres's overloads of `connect` cannot be overridden as declared.
    const Base = pg.Client as unknown as new (config: pg.ClientConfig) => {
      connect(callback?: (err?: Error) => void): Promise<unknown> | undefined;
    };
    return class ServerListClient extends Base {
      readonly server: { url: string; index: number };

      constructor(config: pg.ClientConfig) {
        const server = servers.current();
        super({ ...config, ...connectionDefaults, connectionString: server.url });
        this.server = server;
        // A connection that dies while checked out (between two statements of a transaction, or
        // while its holder awaits something else) emits 'error' with none of the pool's listeners
        // on it: unheard, that would end the process. The statements in flight fail on their own,
        // the client is no longer queryable, and the pool drops it when it is released.
        (this as unknown as pg.Client).on('error', () => {});
      }

      override connect(callback?: (err?: Error) => void): Promise<unknown> | undefined {
        const done = (err: Error | undefined) => {
          if (err) servers.failed(this.server.index);
        };
        if (callback) {
          return super.connect((err?: Error) => {
            done(err);
            callback(err);
          });
        }
        return super.connect()!.then(
          (client) => client,
          (err: Error) => {
            done(err);
            throw err;
          },
        );
      }
    } as unknown as typeof pg.Client;
  }

  /** The pool's `onConnect`: refuses (and moves on from) a server of the wrong kind. */
  onConnect = async (client: pg.Client): Promise<void> => {
    const { server } = client as unknown as { server: { url: string; index: number } };
    try {
      await this.check(client, server.url);
    } catch (err) {
      this.failed(server.index);
      throw err;
    }
  };

  /** A connected client of its own (the notification connection): every server tried once, in turn. */
  async connectClient(config: pg.ClientConfig = {}): Promise<pg.Client> {
    let lastError: unknown;
    for (let i = 0; i < this.size; i++) {
      const server = this.current();
      const client = new pg.Client({ ...config, ...connectionDefaults, connectionString: server.url });
      // An error event before the caller attaches its own handler must not end the process.
      const ignore = () => {};
      client.on('error', ignore);
      try {
        await client.connect();
        await this.check(client, server.url);
        return client;
      } catch (err) {
        lastError = err;
        this.failed(server.index);
        await client.end().catch(() => {});
      }
    }
    throw lastError;
  }
}
