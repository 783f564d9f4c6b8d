import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * Performance (issue 16, docs/performance.md):
 *
 * Every update or delete of a key, a merchant or a token notifies channel `mwa_auth`, so each
 * process can hold token, key and merchant state in memory and forget it the moment it changes
 * (src/platform/auth/auth-cache.ts). Statement-level triggers: one notification per statement, and
 * PostgreSQL folds identical notifications of one transaction into one, delivered at its commit.
 *
 * `mwa_post_entry` posts one balanced entry in one round trip (src/ledger/ledger.ts, `postEntry`):
 * the same steps the ledger ran as five to seven statements, in the same order, so the hot rows
 * (a merchant's custody) are held locked for one statement's time instead of several round trips.
 *
 * Both functions live in src/db/functions/ (docs/stored-functions.md), their only source: the files
 * are applied after the migrations, so this migration creates the trigger's function from its file
 * and no longer carries `mwa_post_entry`'s first body.
 */
const authTables = ['api_keys', 'merchants', 'access_tokens'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await applyStoredFunction(db, 'mwa_notify_auth_change.sql');
  for (const table of authTables) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_notify_auth_change AFTER UPDATE OR DELETE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION mwa_notify_auth_change()`,
      )
      .execute(db);
  }
}
