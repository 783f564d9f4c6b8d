import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { planFanOut, type FanOutEndpoint } from './state.js';
import {
  endpointsForFanOut,
  endpointsLockName,
  insertDeliveries,
  lockEndpointsShared,
  lockUndispatchedEvents,
  markEventsDispatched,
} from './queries/fan-out.js';

/**
 * Making delivery records: the fan-out of the events outbox. A record is its own queue item
 * (`pending`, due at `next_attempt_at`): the delivery worker claims it from the table
 * (delivery-worker.ts); no job is queued for it.
 */

/**
 * The job kind an earlier version queued per record. Such jobs left in a database end without
 * effect (workers.ts): the record they name is delivered by the worker like any other.
 */
export const deliverJobKind = 'webhook.deliver';
/** Events fanned out per ticker run (one transaction)... */
export const fanOutBatchEvents = 500;
/** ...and delivery records made by it: events past this bound wait for the next batch (at least one event always goes).
 * */
export const fanOutBatchRecords = 2_000;
/** Batches per ticker run while each finds events (each its own transaction, so records appear batch by batch). */
export const fanOutBatchesPerRun = 8;

/**
 * Fans out one batch of undispatched events in one transaction: claims them with FOR UPDATE SKIP
 * LOCKED (another process takes the next ones), creates their records, marks them
 * dispatched. Returns the number of events handled.
 */
export async function fanOutBatch(
  db: Kysely<Database>,
  batchSize = fanOutBatchEvents,
  recordsMax = fanOutBatchRecords,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const events = await lockUndispatchedEvents(trx, batchSize);
    if (events.length === 0) return 0;
    const merchants = [...new Set(events.map((e) => e.merchant_id))];
    // Endpoints are judged as they were at each event's time: those enabled now or changed since
    // the batch's oldest event, each with its changes since then, read in one statement so that an
    // endpoint and its changes come from one snapshot, under each merchant's endpoints lock held
    // shared, so that no change begun before the read is still to commit.
    const owners = [...new Set(events.map((e) => endpointsLockName(e.merchant_id, e.environment)))];
    await lockEndpointsShared(trx, owners);
    const oldest = new Date(Math.min(...events.map((e) => e.created_at.getTime())));
    const rows = await endpointsForFanOut(trx, merchants, oldest);
    const endpoints: FanOutEndpoint[] = rows.map((e) => ({
      ...e,
      changes: (e.changes ?? []).map((c) => ({ ...c, valid_from: new Date(c.valid_from) })),
    }));
    const plan = planFanOut(events, endpoints);
    const perEvent = new Map<string, number>();
    for (const p of plan) perEvent.set(p.eventId, (perEvent.get(p.eventId) ?? 0) + 1);
    const kept = new Set<string>();
    let records = 0;
    for (const ev of events) {
      const n = perEvent.get(ev.id) ?? 0;
      if (kept.size > 0 && records + n > recordsMax) break;
      kept.add(ev.id);
      records += n;
    }
    await insertDeliveries(
      trx,
      plan.filter((p) => kept.has(p.eventId)),
    );
    const done = events.filter((e) => kept.has(e.id)).map((e) => e.seq);
    await markEventsDispatched(trx, done);
    return done.length;
  });
}

/** A ticker run of the fan-out: batches until the outbox has no undispatched event, at most `fanOutBatchesPerRun`. */
export async function fanOut(db: Kysely<Database>): Promise<number> {
  let events = 0;
  for (let batch = 0; batch < fanOutBatchesPerRun; batch++) {
    const n = await fanOutBatch(db);
    if (n === 0) break;
    events += n;
  }
  return events;
}
