import { sql, type Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { newId } from '../../../platform/ids.js';
import { scopeClockSql, scopeNowSql } from '../../../platform/queries/clock.js';
import type { FanOutEndpoint, PlannedDelivery } from '../state.js';

/** The statements of the fan-out of the events outbox (fan-out.ts) and of an endpoint's subscription changes. */

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

export function endpointsLockName(merchantId: string, environment: string): string {
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

export interface OutboxEvent {
  seq: string;
  id: string;
  merchant_id: string;
  environment: string;
  type: string;
  created_at: Date;
}

/**
 * Claims up to `batchSize` events of the fan-out queue (migration 053), oldest first, skipping
 * those another process holds.
 */
export async function lockUndispatchedEvents(trx: Transaction<Database>, batchSize: number): Promise<OutboxEvent[]> {
  const { rows } = await sql<OutboxEvent>`
      SELECT event_seq::text AS seq, event_id AS id, merchant_id, environment, type, created_at
      FROM webhook_fan_out_queue
      ORDER BY event_seq
      LIMIT ${batchSize}
      FOR UPDATE SKIP LOCKED
    `.execute(trx);
  return rows;
}

/** Takes the endpoints lock of these merchants and environments shared (`endpointsLockName`), in name order. */
export async function lockEndpointsShared(trx: Transaction<Database>, owners: readonly string[]): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock_shared(hashtextextended(o.name, 0)) FROM unnest(${sql.val(owners)}::text[])
      AS o(name) ORDER BY o.name`.execute(trx);
}

export type FanOutEndpointRow = FanOutEndpoint & {
  changes: { valid_from: string; prev_status: string | null; prev_event_types: string[] | null }[] | null;
};

/** The merchants' endpoints enabled now or changed since `oldest`, each with its changes since then. */
export async function endpointsForFanOut(
  trx: Transaction<Database>,
  merchants: readonly string[],
  oldest: Date,
): Promise<FanOutEndpointRow[]> {
  const { rows } = await sql<FanOutEndpointRow>`
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
  return rows;
}

/** Takes the events of these sequence numbers off the fan-out queue: they are dispatched. */
export async function markEventsDispatched(trx: Transaction<Database>, seqs: readonly string[]): Promise<void> {
  await sql`DELETE FROM webhook_fan_out_queue WHERE event_seq = ANY(${sql.val(seqs)}::bigint[])`.execute(trx);
}
