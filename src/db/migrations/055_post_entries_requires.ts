import { sql, type Kysely } from 'kysely';

/**
 * `mwa_post_entries_across` takes `p_entry_requires` (an entry posts only when the entry it names
 * did: an exchange's buy requires its sell, so both go in one call): a new argument is a new
 * signature, which `CREATE OR REPLACE` cannot make (docs/stored-functions.md), so the form without
 * it is dropped here and the function's file creates the new one after the migrations. Its
 * argument has a default: a process of the previous release, calling with the old arguments during
 * a rolling deploy, reaches the new function.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS mwa_post_entries_across(text[], text[], text[], text[], text[], text[], boolean[],
    text[], text[], text[], text[], text[], text[], text[], integer[], integer[], numeric[], integer[], integer[],
    numeric[])`.execute(db);
}
