/**
 * `mwa_post_entries` posts many balanced entries of one merchant in one call (src/ledger/post-many.ts,
 * `postEntries`): group commit (docs/group-commit.md) writes a batch of deposits with one posting
 * statement instead of one per deposit. Each entry gets the answer `mwa_post_entry` (migrations
 * 024, 031) would have given it, called once per entry in the same order in one transaction:
 * the merchant's write lock first, missing accounts created in key order, the touched accounts
 * locked in ascending id order, the rules of each account checked, then entry by entry: a
 * shortfall ('short' and the first account in lock order) or a repeat ('duplicate') refuses that
 * entry alone and writes nothing of it; a later entry sees the balances the earlier posted ones
 * left. The balances are then updated once per account and the postings written in entry and
 * line order.
 *
 * Accounts come as parallel arrays, one element per distinct account of the call in creation
 * order (asset, then key); deltas as (entry, account, change of the stored balance); lines as
 * (entry, account, signed amount: debit positive). Indexes are 1-based.
 *
 * `mwa_post_entries` now lives in src/db/functions/ (docs/stored-functions.md), its only source,
 * applied after the migrations: this migration no longer carries its first body, and creates
 * nothing.
 */
export async function up(): Promise<void> {}
