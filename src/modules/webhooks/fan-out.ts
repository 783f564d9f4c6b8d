import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { enqueue, enqueueMany, type JobSpec } from '../../jobs/queue.js';
import { newId } from '../../platform/ids.js';
import { scopeNowSql, type ClockScope } from '../../platform/clock.js';
import { planFanOut, type PlannedDelivery } from './state.js';

/**
 * Making delivery records and their jobs: the fan-out of the events outbox, a record's job, and
 * the recovery of records whose job was lost. Sending an attempt is delivery.ts.
 */

type Db = Kysely<Database> | Transaction<Database>;

export const deliverJobKind = 'webhook.deliver';
/** A delivery job reschedules itself (RetryLater) between attempts; this bounds its runs, far above 8 attempts. */
export const deliverJobRunsMax = 100;
/** Events fanned out per ticker run (one transaction)... */
export const fanOutBatchEvents = 500;
/** ...and delivery records made by it: events past this bound wait for the next run (at least one event always goes). */
export const fanOutBatchRecords = 2_000;
/** Overdue records re-queued per recovery run. */
export const recoveryBatch = 500;
/** A `pending`/`failed` record this far past its time with no live job is queued again. */
export const recoveryGraceMs = 120_000;

const dedupeKey = (id: string, generation: number) => `${deliverJobKind}:${id}:${generation}`;

/**
 * Queues the job that delivers one record (in the caller's transaction). One live job per record
 * and generation. The job is on the record's merchant's clock (a sandbox merchant's own time).
 */
export async function enqueueDelivery(trx: Db, id: string, generation: number, clock: ClockScope, runAt?: Date, endpointId?: string): Promise<void> {
  await enqueue(trx, deliveryJob(id, generation, clock, runAt, endpointId));
}

/** A record's job; the endpoint in the payload lets the job step aside while its endpoint is busy (delivery.ts). */
function deliveryJob(id: string, generation: number, clock: ClockScope, runAt?: Date, endpointId?: string): JobSpec {
  return {
    kind: deliverJobKind,
    payload: { delivery_id: id, generation, ...(endpointId ? { endpoint_id: endpointId } : {}) },
    dedupeKey: dedupeKey(id, generation),
    maxAttempts: deliverJobRunsMax,
    clock,
    ...(runAt ? { runAt } : {}),
  };
}

/**
 * Inserts planned records (bound ones `pending`, due now, with a job each); returns how many were
 * new. Each record's times are its merchant's time (the database's clock plus a sandbox offset).
 */
export async function insertDeliveries(trx: Transaction<Database>, plan: readonly PlannedDelivery[]): Promise<number> {
  let created = 0;
  // Bounded chunks: at most 500 rows per statement.
  for (let i = 0; i < plan.length; i += 500) {
    const rows = plan.slice(i, i + 500).map((p) => {
      const now = scopeNowSql(p.merchantId, p.environment);
      return {
        id: newId('whd'),
        merchant_id: p.merchantId,
        environment: p.environment as 'sandbox',
        event_id: p.eventId,
        event_type: p.eventType,
        endpoint_id: p.endpointId,
        status: p.endpointId === null ? ('no_subscriber' as const) : ('pending' as const),
        next_attempt_at: p.endpointId === null ? null : now,
        lease_until: null,
        created_at: now,
        updated_at: now,
      };
    });
    const inserted = await trx
      .insertInto('webhook_deliveries')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .returning(['id', 'endpoint_id', 'generation', 'merchant_id', 'environment'])
      .execute();
    // Their jobs in one statement (the fan-out of a batch costs a few round trips, not one per record).
    await enqueueMany(trx, inserted.filter((r) => r.endpoint_id !== null).map((r) => deliveryJob(r.id, r.generation, { merchantId: r.merchant_id, environment: r.environment }, undefined, r.endpoint_id!)));
    created += inserted.length;
  }
  return created;
}

interface OutboxEvent {
  seq: string;
  id: string;
  merchant_id: string;
  environment: string;
  type: string;
}

/**
 * Fans out one batch of undispatched events in one transaction: claims them with FOR UPDATE SKIP
 * LOCKED (another process takes the next ones), creates their records and jobs, marks them
 * dispatched. Returns the number of events handled.
 */
export async function fanOutBatch(db: Kysely<Database>, batchSize = fanOutBatchEvents, recordsMax = fanOutBatchRecords): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows: events } = await sql<OutboxEvent>`
      SELECT seq::text AS seq, id, merchant_id, environment, type FROM events
      WHERE webhook_dispatched_at IS NULL
      ORDER BY seq
      LIMIT ${batchSize}
      FOR UPDATE SKIP LOCKED
    `.execute(trx);
    if (events.length === 0) return 0;
    const merchants = [...new Set(events.map((e) => e.merchant_id))];
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'merchant_id', 'environment', 'event_types'])
      .where('status', '=', 'enabled')
      .where('merchant_id', 'in', merchants)
      .orderBy('seq')
      .execute();
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
    await insertDeliveries(trx, plan.filter((p) => kept.has(p.eventId)));
    const done = events.filter((e) => kept.has(e.id)).map((e) => e.seq);
    await sql`UPDATE events SET webhook_dispatched_at = now() WHERE seq = ANY(${sql.val(done)}::bigint[])`.execute(trx);
    return done.length;
  });
}

/**
 * Safety net for jobs lost or parked `dead` by the queue (e.g. a long database outage): a
 * `pending`/`failed` record well past its time whose job is gone gets a new one.
 */
export async function recoverOverdue(db: Kysely<Database>, limit = recoveryBatch): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // next_attempt_at is on the merchant's clock: the bound on real time keeps the index range, the
    // second condition reads each record's own merchant's time.
    const { rows } = await sql<{ id: string; generation: number; merchant_id: string; environment: 'sandbox' | 'production' }>`
      SELECT d.id, d.generation, d.merchant_id, d.environment FROM webhook_deliveries d
      WHERE d.status IN ('pending', 'failed')
        AND d.next_attempt_at < now() + (SELECT COALESCE(max(offset_ms), 0) FROM sandbox_clocks) * interval '1 millisecond' - make_interval(secs => ${recoveryGraceMs / 1000})
        AND d.next_attempt_at < ${scopeNowSql(sql.ref('d.merchant_id'), sql.ref('d.environment'))} - make_interval(secs => ${recoveryGraceMs / 1000})
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT EXISTS (
          SELECT 1 FROM jobs j WHERE j.dedupe_key = ${deliverJobKind + ':'} || d.id || ':' || d.generation AND j.status = 'pending'
        )
      ORDER BY d.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    `.execute(trx);
    for (const r of rows) {
      await trx.deleteFrom('jobs').where('dedupe_key', '=', dedupeKey(r.id, r.generation)).execute();
      await enqueueDelivery(trx, r.id, r.generation, { merchantId: r.merchant_id, environment: r.environment });
    }
    return rows.length;
  });
}
