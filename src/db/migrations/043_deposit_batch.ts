/**
 * A batch of deposits in one statement (issue 16, docs/group-commit.md "One statement a batch"):
 * the claim, the rows, the postings, the events and the idempotency records of a group commit's
 * batch in one autocommitted call instead of six round trips (`BEGIN`, claim, rows, postings,
 * records, `COMMIT`). Three functions:
 *
 * - `mwa_store_results`: the records of a batch's finished writes, as `runWriteBatch` stored them
 *   (a row older than the window is a new key, a lapsed claim is replaced); both paths use it.
 * - `mwa_insert_deposits`: the members resolved and the rows inserted, as `insertDeposits`
 *   (src/modules/deposits/queries.ts) did in its own statement; both paths use it.
 * - `mwa_deposit_batch`: `mwa_claim_keys` (migration 033), then the writes that run (a fresh or
 *   absent nonce, the key's lock taken, no record within the window, the first write of its key
 *   in the batch): each one refused before the statement (its fields: the caller's body) or
 *   inserted through `mwa_insert_deposits`; the inserted ones posted through the ledger's
 *   `mwa_post_entries` (a refusal there raises: the caller then runs the writes one by one, as
 *   before), their events written, and every result stored through `mwa_store_results`.
 *   The caller renders each deposit's answer before the call, around its two values the
 *   statement decides (the member's id, when the request named the external id, and the time);
 *   the stored body and the answer are the same text. `created_at` (the deposit's and its
 *   event's) is kept to the millisecond, the precision of the answer, so that a later read shows
 *   the same time. A key holding a claim for the same request (a record that is no result: in
 *   progress, or lapsed and to run anew) declines the whole statement (SQLSTATE MWB01, nothing
 *   kept): the caller runs the batch in a transaction, where such a key is judged in order.
 *   The ledger's lines come from the caller per deposit (one element per line: its account,
 *   whose owner is the deposit's member when `p_line_owner_id` is null, the change of the stored
 *   balance and the signed amount); every account of an entry is on one line.
 *   One row per write, in order: what the claim found (`fresh`, `locked`, the record of a write
 *   that did not run) or, for a write that ran, its outcome and the result stored.
 *
 * `mwa_deposit_batch` was dropped by migration 051.
 *
 * `mwa_store_results` and `mwa_insert_deposits` now live in src/db/functions/
 * (docs/stored-functions.md), their only source, applied after the migrations: this migration no
 * longer carries their first bodies, and creates nothing.
 */
export async function up(): Promise<void> {}
