/**
 * `mwa_claim_keys` opens a group commit's batch in one statement (src/platform/writes/write-batch.ts,
 * `runWriteBatch`; docs/group-commit.md):
 * 1. the merchants' write locks, waited for, in the given order;
 * 2. the signed requests' nonces, consumed as `consumeNonce` does (src/platform/writes/nonces.ts: a new
 *    row, or an expired one taken over; else the nonce is used), in one sorted order (byte order,
 *    as the nonce batcher sorts its statements') so that two transactions consuming the same
 *    nonces cannot wait in a cycle; a nonce named twice in the batch is fresh for its first
 *    request only. They commit with the batch, so a batch that rolls back consumed none;
 * 3. per idempotency key its lock, tried (one held elsewhere answers `locked` false and is not
 *    read), and the key's record within the window.
 * It replaces three statements: the nonces were consumed before the batch in an autocommitted
 * statement of their own (with its own commit), and the locks and the records read had to be two
 * because a statement sees the rows committed when it started. Here each read is a statement of
 * its own inside the function (READ COMMITTED gives every statement of a volatile function a new
 * snapshot), taken after its key's lock, so it sees the record of a transaction that held the
 * lock until its commit. Every statement is an index look-up by its key, whatever plan
 * PostgreSQL keeps for it.
 *
 * One row per key, in order (`ord` 1-based): `fresh` is null for a request without a nonce; the
 * record's columns are null when there is none.
 *
 * `mwa_claim_keys` now lives in src/db/functions/ (docs/stored-functions.md), its only source,
 * applied after the migrations: this migration no longer carries its body, and creates nothing.
 */
export async function up(): Promise<void> {}
