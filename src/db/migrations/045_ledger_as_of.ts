import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * Balances as of an instant and the merchant's journal (issue 41, docs/ledger.md "As of" and
 * "The merchant's journal"):
 *
 * - An entry's `created_at` is set when it is inserted, on the merchant's clock: the statement's
 *   time (`clock_timestamp()`, taken after the posting holds the merchant's write lock, so a
 *   merchant's entries are timed in the order they post) plus the merchant's sandbox offset,
 *   as events' and objects' times are. Before, it was the transaction's start on real time: an
 *   entry that waited for the lock could be timed before one that committed ahead of it, and a
 *   sandbox merchant's journal did not line up with its objects. Entries without a merchant
 *   (none posted since migration 026) keep the column's default.
 * - Each posting carries its entry's `created_at` (filled by a trigger from the entry, inserted
 *   just before in the same statement or transaction; rows of before are filled here), and
 *   `postings_account_time (account_id, created_at) INCLUDE (amount)` lets an account's balance
 *   at an instant be summed from the index alone, reading only that account's postings up to it
 *   (it replaces `postings_account (account_id)`).
 * - `journal_entries_merchant (merchant_id, environment, seq)`: the merchant's journal newest
 *   first; `journal_entries_reference (reference_id)`: the `reference_id` filter.
 *
 * The triggers' functions live in src/db/functions/ (docs/stored-functions.md), their only source.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyStoredFunction(db, 'mwa_entry_time.sql');
  await sql`CREATE TRIGGER journal_entries_time BEFORE INSERT ON journal_entries FOR EACH ROW
    EXECUTE FUNCTION mwa_entry_time()`.execute(db);

  await sql`ALTER TABLE postings ADD COLUMN created_at timestamptz`.execute(db);
  await sql`UPDATE postings p SET created_at = e.created_at FROM journal_entries e WHERE e.id = p.entry_id`.execute(db);
  await sql`ALTER TABLE postings ALTER COLUMN created_at SET NOT NULL`.execute(db);
  await applyStoredFunction(db, 'mwa_posting_time.sql');
  await sql`CREATE TRIGGER postings_time BEFORE INSERT ON postings FOR EACH ROW
    EXECUTE FUNCTION mwa_posting_time()`.execute(db);
  await sql`CREATE INDEX postings_account_time ON postings (account_id, created_at) INCLUDE (amount)`.execute(db);
  // Its leading column serves every lookup by account the old index served: one index less to write per posting.
  await sql`DROP INDEX postings_account`.execute(db);

  await sql`CREATE INDEX journal_entries_merchant ON journal_entries (merchant_id, environment, seq)`.execute(db);
  await sql`CREATE INDEX journal_entries_reference ON journal_entries (reference_id)`.execute(db);
}
