import { sql, type Kysely } from 'kysely';

/**
 * The single-merchant batch functions go: `mwa_post_entries`, `mwa_insert_deposits` and
 * `mwa_store_results` (032/034, 043) were kept by migration 051 for processes of the release
 * before `*_across` until the release after. This is that release: nothing calls them (the code
 * calls `mwa_post_entries_across`, `mwa_insert_deposits_across`, `mwa_store_results_across`), and
 * their files go with them (docs/stored-functions.md). `mwa_lock_accounts` stays: the one-entry
 * posting (`mwa_post_entry_rows`) locks its accounts through it.
 */
const dropped = [
  'mwa_post_entries(text, text, text[], text[], text[], text[], text[], boolean[], text[], text[], text[], text[], ' +
    'text[], integer[], integer[], numeric[], integer[], integer[], numeric[])',
  'mwa_insert_deposits(text, text, timestamptz, text[], text[], text[], text[], numeric[], text[])',
  'mwa_store_results(text, text, text[], text[], text[], integer[], text[], integer, integer)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const fn of dropped) await sql.raw(`DROP FUNCTION IF EXISTS ${fn}`).execute(db);
}
