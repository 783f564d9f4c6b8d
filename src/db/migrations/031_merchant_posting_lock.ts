/**
 * Every posting for a merchant first takes the merchant's write lock (a transaction-scoped
 * advisory lock on `merchant-writes|<merchant>|<environment>`), before any of its account rows.
 * Group commit (docs/group-commit.md) writes many of a merchant's movements in one transaction,
 * locking their accounts one after the other; a transaction of the same merchant that locked a
 * member's account and then waited for the merchant's custody would otherwise wait in a cycle
 * with it. With the lock first, the merchant's money writes take turns from their first posting
 * to their commit, which is how long the custody row held them anyway. Entries without a
 * merchant take no lock.
 *
 * The posting itself is unchanged: the function of migration 024 is kept under another name and
 * called after the lock.
 *
 * `mwa_post_entry` and `mwa_post_entry_rows` now live in src/db/functions/
 * (docs/stored-functions.md), their only source, applied after the migrations: this migration no
 * longer carries the bodies it gave them (nor renames the first), and creates nothing.
 */
export async function up(): Promise<void> {}
