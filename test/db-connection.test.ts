/**
 * The connection to a PostgreSQL server (src/db/connection.ts). PostgreSQL only: the embedded
 * database has no server that could end a connection, so on it this file has nothing to test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { postgresOnly } from './support/service.js';
import { withEndedConnections } from './support/database.js';

test(
  'an idle pooled connection the server ends neither crashes the process nor breaks the next statement',
  { skip: postgresOnly() },
  async () => {
    await withEndedConnections(3, async ({ handle, other, crashes }) => {
      // Three connections checked out at once, then idle in the pool.
      const pids = await Promise.all(
        [1, 2, 3].map(() =>
          handle.db.transaction().execute(async (trx) => {
            const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`.execute(trx);
            return rows[0]!.pid;
          }),
        ),
      );
      assert.equal(new Set(pids).size, 3);
      const { rows } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n
        FROM (SELECT pg_terminate_backend(pid) FROM unnest(${pids}::int[]) AS t(pid)) x`.execute(other.db);
      assert.equal(rows[0]!.n, 3);
      await new Promise((r) => setTimeout(r, 200));
      const again = await sql<{ one: number }>`SELECT 1 AS one`.execute(handle.db);
      assert.equal(again.rows[0]!.one, 1);
      assert.deepEqual(crashes, []);
    });
  },
);
