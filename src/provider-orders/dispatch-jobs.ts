import type { Db } from '../db/schema.js';
import { enqueueMany } from '../jobs/queries.js';

/** Runs a dispatch job may take before it is parked `dead` for the operator (docs/jobs.md). */
export const dispatchMaxAttempts = 20;

/**
 * Queues the dispatch job of each order a batch just created, in one statement and in its
 * transaction: the area's job `kind`, the order's id in the payload under `idKey`, deduplicated by
 * kind and id (an order is dispatched by one job however often this runs).
 */
export async function enqueueDispatches(db: Db, kind: string, idKey: string, ids: readonly string[]): Promise<void> {
  await enqueueMany(
    db,
    ids.map((id) => ({ kind, payload: { [idKey]: id }, dedupeKey: `${kind}:${id}`, maxAttempts: dispatchMaxAttempts })),
  );
}
