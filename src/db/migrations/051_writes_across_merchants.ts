import { sql, type Kysely } from 'kysely';

/**
 * Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
 * merchants, so the statements it shares take one list of merchants and environments instead of
 * one of each. Each is the function of an earlier migration with that one change:
 *
 * - `mwa_store_results_across`: `mwa_store_results` (043), a merchant and environment per key;
 * - `mwa_insert_deposits_across`: `mwa_insert_deposits` (043), a merchant and environment per
 *   deposit, each created at its own merchant's time (the sandbox clock's offset);
 * - `mwa_lock_accounts_across`: `mwa_lock_accounts` (034), an environment per account;
 * - `mwa_post_entries_across`: `mwa_post_entries` (032, 034), an environment per account and a
 *   merchant and environment per entry; it takes the write lock of each of its merchants in one
 *   global order (byte order of the lock's name) before any account, as `mwa_claim_keys` does.
 *
 * Each runs with `plan_cache_mode = force_generic_plan`, as `mwa_deposit_batch` did (043,
 * docs/group-commit.md): PostgreSQL otherwise judged the generic plan of a statement over a
 * batch's arrays dearer than a custom one and planned it anew on every call. Every statement in
 * them is a look-up by key or by id, so the generic plan is the plan (test/ledger-plans.test.ts).
 *
 * `mwa_deposit_batch` (043) is dropped: it rendered HTTP answers in SQL; a deposit now has one
 * implementation (the deposits module's `createDeposits`). A process of the previous release
 * still calling it fails that batch, whose writes it then runs again one by one in transactions.
 * The functions it replaces stay for such processes until the release after.
 *
 * The four functions, with their `plan_cache_mode`, live in src/db/functions/
 * (docs/stored-functions.md), their only source, applied after the migrations: this migration no
 * longer carries their first bodies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS mwa_deposit_batch`.execute(db);
}
