import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { newId } from '../../platform/ids.js';
import { scopeClockSql, scopeNowSql } from '../../platform/clock.js';
import { planFanOut, type FanOutEndpoint, type PlannedDelivery } from './state.js';

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

/** Records inserted per statement. */
const insertChunkRows = 1_000;

/**
 * Inserts planned records (bound ones `pending`, due now); returns how many were new. Each
 * record's times are its merchant's time (the database's clock plus a sandbox offset, read once
 * per row by a join). One statement per 1,000 records, its values passed as arrays (no per-row
 * SQL to build).
 */
export async function insertDeliveries(trx: Transaction<Database>, plan: readonly PlannedDelivery[]): Promise<number> {
  let created = 0;
  for (let i = 0; i < plan.length; i += insertChunkRows) {
    const chunk = plan.slice(i, i + insertChunkRows);
    const col = <T>(f: (p: PlannedDelivery) => T) => sql.val(chunk.map(f));
    const result = await sql`
      INSERT INTO webhook_deliveries (id, merchant_id, environment, event_id, event_type, endpoint_id, status,
        next_attempt_at, lease_until, created_at, updated_at)
      SELECT p.id, p.merchant_id, p.environment, p.event_id, p.event_type, p.endpoint_id,
        CASE WHEN p.endpoint_id IS NULL THEN 'no_subscriber' ELSE 'pending' END,
        CASE WHEN p.endpoint_id IS NULL THEN NULL ELSE t.now END, NULL, t.now, t.now
      FROM unnest(
        ${col(() => newId('whd'))}::text[], ${col((p) => p.merchantId)}::text[], ${col((p) => p.environment)}::text[],
        ${col((p) => p.eventId)}::text[], ${col((p) => p.eventType)}::text[], ${col((p) => p.endpointId)}::text[]
      ) AS p(id, merchant_id, environment, event_id, event_type, endpoint_id)
      CROSS JOIN LATERAL (SELECT ${scopeNowSql(sql.ref('p.merchant_id'), sql.ref('p.environment'))} AS now) t
      ON CONFLICT DO NOTHING
    `.execute(trx);
    created += Number(result.numAffectedRows ?? 0n);
  }
  return created;
}

/** The lock of a merchant's endpoints in one environment: changes take it alone, the fan-out shared. */
export function endpointsLockSql(merchantId: string, environment: string) {
  return sql`hashtextextended(${endpointsLockName(merchantId, environment)}, 0)`;
}

function endpointsLockName(merchantId: string, environment: string): string {
  return `webhook_endpoints|${merchantId}|${environment}`;
}

/**
 * Notes a change of an endpoint's subscription (its creation, `status`, `event_types`, its
 * deletion) with its state before (`prev` undefined: the change created it), in the caller's
 * transaction: the fan-out judges each event by the endpoints as they were at its time
 * (migration 044). The change takes the merchant's endpoints lock first, which a fan-out holds
 * shared while it reads them, and is timed after it (the merchant's time when the lock is held,
 * and never before the endpoint's previous change): an event the fan-out has read was committed
 * before any change it has not seen began to count.
 */
export async function recordEndpointChange(
  trx: Transaction<Database>,
  endpoint: { id: string; merchant_id: string; environment: string },
  prev: { status: string; event_types: readonly string[] } | undefined,
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${endpointsLockSql(endpoint.merchant_id, endpoint.environment)})`.execute(trx);
  await sql`
    INSERT INTO webhook_endpoint_changes (endpoint_id, merchant_id, environment, valid_from, prev_status,
      prev_event_types)
    SELECT ${endpoint.id}, ${endpoint.merchant_id}, ${endpoint.environment},
           GREATEST(${scopeClockSql(endpoint.merchant_id, endpoint.environment)},
                    (SELECT max(c.valid_from) FROM webhook_endpoint_changes c WHERE c.endpoint_id = ${endpoint.id})),
           ${prev?.status ?? null}, ${prev ? JSON.stringify(prev.event_types) : null}::jsonb
  `.execute(trx);
}

interface OutboxEvent {
  seq: string;
  id: string;
  merchant_id: string;
  environment: string;
  type: string;
  created_at: Date;
}

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
    const { rows: events } = await sql<OutboxEvent>`
      SELECT seq::text AS seq, id, merchant_id, environment, type, created_at FROM events
      WHERE webhook_dispatched_at IS NULL
      ORDER BY seq
      LIMIT ${batchSize}
      FOR UPDATE SKIP LOCKED
    `.execute(trx);
    if (events.length === 0) return 0;
    const merchants = [...new Set(events.map((e) => e.merchant_id))];
    // Endpoints are judged as they were at each event's time: those enabled now or changed since
    // the batch's oldest event, each with its changes since then, read in one statement so that an
    // endpoint and its changes come from one snapshot, under each merchant's endpoints lock held
    // shared, so that no change begun before the read is still to commit.
    const owners = [...new Set(events.map((e) => endpointsLockName(e.merchant_id, e.environment)))];
    await sql`SELECT pg_advisory_xact_lock_shared(hashtextextended(o.name, 0)) FROM unnest(${sql.val(owners)}::text[])
      AS o(name) ORDER BY o.name`.execute(trx);
    const oldest = new Date(Math.min(...events.map((e) => e.created_at.getTime())));
    const { rows } = await sql<
      FanOutEndpoint & {
        changes: { valid_from: string; prev_status: string | null; prev_event_types: string[] | null }[] | null;
      }
    >`
      SELECT e.id, e.merchant_id, e.environment, e.status, e.event_types, ch.changes
      FROM webhook_endpoints e
      LEFT JOIN LATERAL (
        SELECT json_agg(json_build_object('valid_from', c.valid_from, 'prev_status', c.prev_status,
          'prev_event_types', c.prev_event_types)
                        ORDER BY c.valid_from, c.seq) AS changes
        FROM webhook_endpoint_changes c WHERE c.endpoint_id = e.id AND c.valid_from > ${oldest}
      ) ch ON true
      WHERE e.merchant_id = ANY(${sql.val(merchants)}::text[]) AND (e.status = 'enabled' OR ch.changes IS NOT NULL)
      ORDER BY e.seq
    `.execute(trx);
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
    await sql`UPDATE events SET webhook_dispatched_at = now() WHERE seq = ANY(${sql.val(done)}::bigint[])`.execute(trx);
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
