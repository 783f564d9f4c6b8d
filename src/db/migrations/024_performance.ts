import { sql, type Kysely } from 'kysely';

/**
 * Performance (issue 16, docs/performance.md):
 *
 * Every update or delete of a key, a merchant or a token notifies channel `mwa_auth`, so each
 * process can hold token, key and merchant state in memory and forget it the moment it changes
 * (src/platform/auth-cache.ts). Statement-level triggers: one notification per statement, and
 * PostgreSQL folds identical notifications of one transaction into one, delivered at its commit.
 */
const authTables = ['api_keys', 'merchants', 'access_tokens'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`CREATE FUNCTION mwa_notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('mwa_auth', TG_TABLE_NAME);
  RETURN NULL;
END
$$`).execute(db);
  for (const table of authTables) {
    await sql.raw(`CREATE TRIGGER ${table}_notify_auth_change AFTER UPDATE OR DELETE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION mwa_notify_auth_change()`).execute(db);
  }
}
