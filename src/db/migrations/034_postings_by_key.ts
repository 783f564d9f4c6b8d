/**
 * Postings whose statements PostgreSQL plans the same way however small the tables were when it
 * first planned them (issue 16):
 *
 * - `mwa_lock_accounts`, shared by both posting functions: each account of a posting is looked up
 *   by its whole key, one row at a time; the missing ones are created (in the order given, the
 *   callers' key order); then each is locked by its id, in ascending id order, and its rules
 *   checked against the caller's. The functions of migrations 024 and 032 joined the accounts
 *   with `unnest` of their arrays: PL/pgSQL keeps a generic plan of each statement, and a plan
 *   made while `ledger_accounts` was small looked up the environment only and filtered every
 *   account of it, on every posting, as the table grew (seen with auto_explain: `Index Cond:
 *   (environment = $1)`, the rest a join filter). A look-up by the whole key, or by the id, has
 *   no such plan. The balances are updated one account at a time, by id, for the same reason.
 * - `mwa_post_entries` (migration 032), besides: a call in which no entry takes from an account
 *   that must stay non-negative (a batch of deposits: each only adds to two accounts) cannot have
 *   a shortfall, so its journal entries are inserted in one statement instead of a look-up and
 *   an insert per entry, with the same answers (a repeat of an earlier posting, or of an earlier
 *   entry of the call, is 'duplicate' and writes nothing). Any other call runs the loop of 032.
 * - `mwa_post_entry_rows` (migration 024's `mwa_post_entry`, renamed by 031): the same answers;
 *   an account whose stored rules differ from the caller's raises before any shortfall is told
 *   (a programming error either way).
 *
 * The three functions now live in src/db/functions/ (docs/stored-functions.md), their only source,
 * applied after the migrations: this migration no longer carries the bodies it gave them, and
 * creates nothing.
 */
export async function up(): Promise<void> {}
