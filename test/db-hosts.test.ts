/**
 * A DATABASE_URL naming several servers (src/db/hosts.ts) and connections lost while checked
 * out. The parsing runs everywhere; the connections need PostgreSQL (TEST_DATABASE_URL). The
 * failover itself (a standby promoted) is `npm run test:failover` (scripts/failover/run.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/connection.js';
import { parseDatabaseTarget } from '../src/db/hosts.js';
import { loadConfig } from '../src/platform/config/config.js';
import { testDatabaseUrl, postgresOnly } from './support/service.js';
import { directTestDatabaseUrl, testDatabaseOptions, withEndedConnections } from './support/database.js';

test('a host list is read as libpq reads it: one URL per server, target_session_attrs apart', () => {
  assert.deepEqual(
    parseDatabaseTarget('postgres://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write&sslmode=disable'),
    {
      urls: ['postgres://u:p@h1:5432/db?sslmode=disable', 'postgres://u:p@h2:5433/db?sslmode=disable'],
      targetSessionAttrs: 'read-write',
    },
  );
  assert.deepEqual(parseDatabaseTarget('postgresql://h1/db'), {
    urls: ['postgresql://h1/db'],
    targetSessionAttrs: 'any',
  });
  assert.deepEqual(parseDatabaseTarget('postgres://[::1]:5432,h2/db')?.urls, [
    'postgres://[::1]:5432/db',
    'postgres://h2/db',
  ]);
  assert.equal(parseDatabaseTarget('postgres://h1,,h2/db'), undefined);
  assert.equal(parseDatabaseTarget('postgres://h1/db?target_session_attrs=prefer-standby'), undefined);
  assert.equal(parseDatabaseTarget('mysql://h1/db'), undefined);
  // The setting accepts the list (node-postgres's own parser refuses it: new URL fails on the commas).
  assert.equal(
    loadConfig({ DATABASE_URL: 'postgres://h1:5432,h2:5432/db?target_session_attrs=read-write' }).databaseUrl,
    'postgres://h1:5432,h2:5432/db?target_session_attrs=read-write',
  );
  assert.throws(
    () => loadConfig({ DATABASE_URL: 'postgres://h1:5432,h2:5432/db?target_session_attrs=standby' }),
    /DATABASE_URL/,
  );
  assert.equal(loadConfig({ DATABASE_POOLER: 'transaction' }).databasePooler, 'transaction');
  assert.throws(() => loadConfig({ DATABASE_POOLER: 'session' }), /DATABASE_POOLER/);
});

/** A port where nothing listens (taken and released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test(
  'connections go to the next server of the list when the first refuses, and listen there',
  { skip: postgresOnly() },
  async () => {
    const real = new URL(testDatabaseUrl());
    const url =
      `postgres://${real.username}@127.0.0.1:${await deadPort()},${real.host}${real.pathname}` +
      `?target_session_attrs=read-write`;
    const handle = await openDatabase(url, '', { ...testDatabaseOptions(), poolMax: 2 });
    try {
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(handle.db);
      assert.equal(rows[0]!.one, 1);
      const listening = new Promise<boolean>((resolve) => {
        void handle
          .listen(
            'mwa_hosts_test',
            () => {},
            (on) => {
              if (on) resolve(true);
            },
          )
          .then((stop) => listening.then(stop));
      });
      assert.equal(await Promise.race([listening, new Promise((r) => setTimeout(() => r(false), 5_000))]), true);
    } finally {
      await handle.close();
    }
  },
);

test(
  'a connection the server ends while it is checked out (inside a transaction) neither crashes the process ' +
    'nor stays in the pool',
  { skip: postgresOnly() },
  async () => {
    await withEndedConnections(1, async ({ handle, other, crashes }) => {
      const failed = await handle.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
          // Ended while this transaction holds it and no statement of it runs: the client emits 'error'.
          await sql`SELECT pg_terminate_backend(${rows[0]!.pid})`.execute(other.db);
          await new Promise((r) => setTimeout(r, 200));
          return sql`SELECT 1`.execute(trx).then(
            () => false,
            () => true,
          );
        })
        .catch(() => true);
      assert.equal(failed, true);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(crashes, []);
      const again = await sql<{ one: number }>`SELECT 1 AS one`.execute(handle.db);
      assert.equal(again.rows[0]!.one, 1);
    });
  },
);

test(
  'behind a transaction-mode pooler no statement is named and nothing listens without DATABASE_LISTEN_URL',
  { skip: postgresOnly() },
  async () => {
    // Directly to the server, so that the transaction below sees its own connection's statements.
    const url = directTestDatabaseUrl();
    const preparedIn = async (pooler: 'none' | 'transaction') => {
      const handle = await openDatabase(url, '', { pooler, poolMax: 1 });
      try {
        return await handle.db.transaction().execute(async (trx) => {
          await trx.selectFrom('merchants').select('id').where('id', '=', 'none').execute();
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`.execute(trx);
          return rows[0]!.n;
        });
      } finally {
        await handle.close();
      }
    };
    assert.ok((await preparedIn('none')) > 0, 'without a pooler the data statements are prepared by name');
    assert.equal(await preparedIn('transaction'), 0);

    const pooled = await openDatabase(url, '', { pooler: 'transaction', poolMax: 1 });
    try {
      const states: boolean[] = [];
      const stop = await pooled.listen(
        'mwa_hosts_test',
        () => {},
        (on) => states.push(on),
      );
      await new Promise((r) => setTimeout(r, 200));
      await stop();
      assert.deepEqual(states, [false]);
    } finally {
      await pooled.close();
    }
  },
);
