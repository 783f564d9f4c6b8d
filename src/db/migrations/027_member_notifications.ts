import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * Performance (issue 16, docs/performance.md, "Request pipeline and the authenticated read"): every update or delete
 * of members notifies channel `mwa_member` with the ids of the rows it touched (comma-separated),
 * or `*` when there are more than fit one notification, so each process can hold the member an
 * `x-on-behalf-of` names (id, status, KYC level) and forget it the moment it changes
 * (src/platform/auth/member-cache.ts). Statement-level triggers with a transition table: one
 * notification per statement, delivered at the commit.
 *
 * Every insert, update or delete of `assets` or `asset_networks` notifies channel `mwa_asset`, so
 * each process can hold the asset catalogue that money writes read
 * (src/modules/assets/catalogue-cache.ts) and forget it the moment the operator changes it.
 *
 * The triggers' functions live in src/db/functions/ (docs/stored-functions.md), their only source.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyStoredFunction(db, 'mwa_notify_member_change.sql');
  for (const event of ['UPDATE', 'DELETE']) {
    await sql
      .raw(
        `CREATE TRIGGER members_notify_${event.toLowerCase()} AFTER ${event} ON members
      REFERENCING OLD TABLE AS changed_members
      FOR EACH STATEMENT EXECUTE FUNCTION mwa_notify_member_change()`,
      )
      .execute(db);
  }
  await applyStoredFunction(db, 'mwa_notify_asset_change.sql');
  for (const table of ['assets', 'asset_networks']) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_notify_asset_change AFTER INSERT OR UPDATE OR DELETE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION mwa_notify_asset_change()`,
      )
      .execute(db);
  }
}
