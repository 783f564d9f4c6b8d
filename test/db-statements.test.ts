/**
 * Statements as the handles run them: the embedded database's prepared statements
 * (src/db/pglite-statements.ts) answer what `PGlite.query` answers, and `readRowsByKey`
 * (src/db/direct.ts) gathers the reads of a turn on the pool and runs inside the transaction it is
 * given. Both databases (`readRowsByKey`); the prepared statements are the embedded database's own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../src/db/connection.js';
import { keyedReadStats, readRowsByKey } from '../src/db/direct.js';
import { EmbeddedStatements } from '../src/db/pglite-statements.js';
import { testDatabaseUrl } from './support/service.js';
import { migratedImage, testDatabaseOptions } from './support/database.js';

test('embedded prepared statements answer as PGlite.query does: rows, types, counts and errors', async () => {
  // From the suite's migrated image: an empty cluster of its own would cost an initdb.
  const pglite = await PGlite.create({
    parsers: { 20: (v: string) => BigInt(v), 1700: (v: string) => v },
    loadDataDir: await migratedImage(),
  });
  try {
    await pglite.exec(
      'CREATE TABLE t (id text PRIMARY KEY, n int8, amount numeric, at timestamptz, tags text[], doc jsonb)',
    );
    const statements = new EmbeddedStatements(pglite);
    const insert = 'INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)';
    const row = ['a', 5n, '1.50', new Date(0), ['x', 'y'], { k: 1 }];
    const inserted = await statements.run(insert, row);
    assert.deepEqual(inserted, { command: 'INSERT', rowCount: 1, rows: [] });
    const select = 'SELECT * FROM t WHERE n >= $1 ORDER BY id';
    const ours = await statements.run(select, [1]);
    const theirs = await pglite.query(select, [1]);
    assert.deepEqual(ours.rows, theirs.rows);
    assert.deepEqual(ours.rows[0], {
      id: 'a',
      n: 5n,
      amount: '1.50',
      at: new Date(0),
      tags: ['x', 'y'],
      doc: { k: 1 },
    });
    assert.deepEqual(await statements.run('UPDATE t SET n = n + $1', [1n]), {
      command: 'UPDATE',
      rowCount: 1,
      rows: [],
    });
    // Prepared once: the same text runs again under the same name.
    await statements.run(select, [1]);
    const prepared = await pglite.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    assert.equal(prepared.rows.filter((r) => r.name.startsWith('mwa_')).length, 3);
    // A refusal is PostgreSQL's error, with its code, as query throws it; the next statement runs.
    await assert.rejects(
      statements.run(insert, row),
      (err: { code?: string; query?: string }) => err.code === '23505' && err.query === insert,
    );
    await assert.rejects(statements.run('SELEC 1', []), (err: { code?: string }) => err.code === '42601');
    assert.deepEqual((await statements.run('SELECT count(*)::int AS c FROM t', [])).rows, [{ c: 1 }]);
    // Inside a transaction: rolled back with it.
    await pglite.query('BEGIN');
    await statements.run('DELETE FROM t', []);
    await pglite.query('ROLLBACK');
    assert.deepEqual((await statements.run('SELECT id FROM t', [])).rows, [{ id: 'a' }]);
  } finally {
    await pglite.close();
  }
});

test(
  "readRowsByKey: the reads of one turn share a statement, each gets its own key's rows; in a transaction it " +
    'reads alone',
  async () => {
    const url = testDatabaseUrl();
    const handle = await openDatabase(
      url,
      '',
      url.startsWith('memory:') ? { embeddedImage: await migratedImage() } : testDatabaseOptions(),
    );
    try {
      const table = `read_keyed_${process.pid}_${Date.now()}`;
      await sql.raw(`CREATE TABLE ${table} (owner text, kind text, n int, PRIMARY KEY (owner, n))`).execute(handle.db);
      try {
        await sql
          .raw(`INSERT INTO ${table} VALUES ('a', 'x', 1), ('a', 'x', 2), ('b', 'x', 3), ('c', 'y', 4)`)
          .execute(handle.db);
        const text = `SELECT owner, n FROM ${table} WHERE kind = $1 AND owner = any($2::text[]) ORDER BY n`;
        const read = (db: typeof handle.db, owner: string, kind = 'x') =>
          readRowsByKey<{ owner: string; n: number }>(db, text, [kind], owner, 'owner');
        const before = { ...keyedReadStats(handle.db) };
        // Called in one turn: a, b, a again, an owner with no rows, and c under another fixed value.
        const [a, b, again, none, c, cx] = await Promise.all([
          read(handle.db, 'a'),
          read(handle.db, 'b'),
          read(handle.db, 'a'),
          read(handle.db, 'z'),
          read(handle.db, 'c', 'y'),
          read(handle.db, 'c'),
        ]);
        assert.deepEqual(a, [
          { owner: 'a', n: 1 },
          { owner: 'a', n: 2 },
        ]);
        assert.deepEqual(again, a);
        assert.notEqual(again, a, 'each caller gets an array of its own');
        assert.deepEqual(b, [{ owner: 'b', n: 3 }]);
        assert.deepEqual(none, []);
        assert.deepEqual(c, [{ owner: 'c', n: 4 }]);
        assert.deepEqual(cx, []);
        const after = keyedReadStats(handle.db);
        assert.equal(after.items - before.items, 6);
        // One batch for the turn (in it one statement for kind x: a, b, z, c; one for kind y).
        assert.equal(after.batches - before.batches, 1);
        await handle.db.transaction().execute(async (trx) => {
          await sql.raw(`UPDATE ${table} SET n = 10 WHERE n = 3`).execute(trx);
          assert.deepEqual(await read(trx, 'b'), [{ owner: 'b', n: 10 }]);
        });
        assert.equal(
          keyedReadStats(handle.db).items,
          after.items,
          'the read in the transaction did not go through the batcher',
        );
        // A failing statement fails its own reads only, and the next turn reads again.
        const broken = `SELECT owner FROM ${table}_missing WHERE kind = $1 AND owner = any($2::text[])`;
        const failing = await Promise.allSettled([
          readRowsByKey(handle.db, broken, ['x'], 'a', 'owner'),
          read(handle.db, 'a'),
          readRowsByKey(handle.db, broken, ['x'], 'b', 'owner'),
        ]);
        assert.deepEqual(
          failing.map((r) => r.status),
          ['rejected', 'fulfilled', 'rejected'],
        );
        assert.equal((failing[0] as PromiseRejectedResult).reason.code, '42P01');
        assert.deepEqual(await read(handle.db, 'b'), [{ owner: 'b', n: 10 }]);
      } finally {
        await sql.raw(`DROP TABLE ${table}`).execute(handle.db);
      }
    } finally {
      await handle.close();
    }
  },
);
