import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { earliestDue } from '../../../db/earliest-due.js';
import type { Database, Db } from '../../../db/schema.js';
import { inScope } from '../../../db/owned-by.js';
import { withPrefix } from '../../../platform/ids.js';
import type { Caller } from '../../../platform/caller.js';
import type { ClockScope } from '../../../platform/clock.js';
import type { WebhookDeliveriesTable } from '../tables.js';
import { subscribesSql } from './claims.js';

/** Reads and writes of delivery records outside the batched claim (service.ts, delivery.ts, operator-routes.ts). */

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** The merchant's records, of one status or all, as a query the keyset pagination pages through. */
export function deliveriesQuery(db: Db, caller: Caller, status: DeliveryRow['status'] | '') {
  let q = db.selectFrom('webhook_deliveries').selectAll().where(inScope(caller));
  if (status !== '') q = q.where('status', '=', status);
  return q;
}

/**
 * Back to `pending`, due now, in a new generation (an attempt of the old one in flight does not
 * write its outcome) and a new round of the schedule; the delivery worker takes it.
 */
export async function requeueRecord(
  trx: Transaction<Database>,
  id: string,
  now: Date,
  endpointId?: string,
): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'pending',
      generation: eb('generation', '+', 1),
      round_attempts: 0,
      next_attempt_at: now,
      updated_at: now,
      ...(endpointId ? { endpoint_id: endpointId } : {}),
    }))
    .where('id', '=', id)
    .execute();
}

/** One record of the merchant, locked. */
export async function lockDelivery(
  trx: Transaction<Database>,
  caller: Caller,
  rawId: string,
): Promise<DeliveryRow | undefined> {
  return trx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', withPrefix('whd', rawId))
    .where(inScope(caller))
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Every failed and/or dead record created since `since` whose endpoint is enabled and subscribes
 * to its type, oldest first, at most `limit`, queued again; answers how many.
 */
export async function requeueFailedSince(
  trx: Transaction<Database>,
  caller: Caller,
  since: Date,
  statuses: readonly string[],
  now: Date,
  limit: number,
): Promise<number> {
  const { rows } = await sql<{ id: string; generation: number }>`
    UPDATE webhook_deliveries SET status = 'pending', generation = generation + 1, round_attempts = 0, next_attempt_at
      = ${now}, updated_at = ${now}
    WHERE id IN (
      SELECT id FROM webhook_deliveries
      WHERE merchant_id = ${caller.merchantId} AND environment = ${caller.environment}
        AND status = ANY(${sql.val(statuses)}::text[]) AND created_at >= ${since}
        -- A record of a disabled or deleted endpoint, or of one that no longer subscribes to its
        -- type, would go straight back to dead unsent (as redeliver refuses it): it waits until
        -- its endpoint is enabled (or widened) again.
        AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id AND e.status =
          'enabled'
                      AND ${subscribesSql('e.event_types', 'webhook_deliveries.event_type')})
      ORDER BY seq
      LIMIT ${limit}
      FOR UPDATE
    )
    RETURNING id, generation
  `.execute(trx);
  return rows.length;
}

export interface ReplayRow {
  event_id: string;
  event_type: string;
  record_id: string | null;
  unbound_id: string | null;
}

/**
 * The kept, fanned-out events of [`since`, `until`) the endpoint subscribes to, each with its
 * record for the endpoint and its `no_subscriber` record, if any; records already `pending` left
 * out, and with `onlyFailed` those `sent` too. Oldest first, at most `limit`.
 */
export async function replayCandidates(
  trx: Transaction<Database>,
  caller: Caller,
  endpoint: { id: string; event_types: readonly string[] },
  range: { since: Date; until: Date | undefined; onlyFailed: boolean },
  limit: number,
): Promise<ReplayRow[]> {
  const { since, until, onlyFailed } = range;
  const { rows } = await sql<ReplayRow>`
    SELECT e.id AS event_id, e.type AS event_type, d.id AS record_id, ns.id AS unbound_id
    FROM events e
    LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.endpoint_id = ${endpoint.id}
    LEFT JOIN webhook_deliveries ns ON ns.event_id = e.id AND ns.endpoint_id IS NULL
    WHERE e.merchant_id = ${caller.merchantId} AND e.environment = ${caller.environment}
      AND e.created_at >= ${since} ${until ? sql`AND e.created_at < ${until}` : sql``}
      AND NOT EXISTS (SELECT 1 FROM webhook_fan_out_queue q WHERE q.event_seq = e.seq)
      AND (${JSON.stringify(endpoint.event_types)}::jsonb @> '["*"]'::jsonb OR
        ${JSON.stringify(endpoint.event_types)}::jsonb @> jsonb_build_array(e.type))
      AND (d.id IS NULL OR d.status <> 'pending')
      ${onlyFailed ? sql`AND (d.id IS NULL OR d.status <> 'sent')` : sql``}
    ORDER BY e.seq
    LIMIT ${limit}
  `.execute(trx);
  return rows;
}

/**
 * Queues again the endpoint's records `requeue` (not already pending) and binds the
 * `no_subscriber` records `bind` to the endpoint, in a new generation; answers how many.
 */
export async function requeueForReplay(
  trx: Transaction<Database>,
  endpointId: string,
  requeue: readonly string[],
  bind: readonly string[],
  now: Date,
): Promise<number> {
  const result = await sql`
      UPDATE webhook_deliveries SET status = 'pending', generation = generation + 1, round_attempts = 0,
        next_attempt_at = ${now}, updated_at = ${now},
        endpoint_id = ${endpointId}
      WHERE (id = ANY(${sql.val(requeue)}::text[]) AND endpoint_id = ${endpointId} AND status <> 'pending')
         OR (id = ANY(${sql.val(bind)}::text[]) AND endpoint_id IS NULL)
    `.execute(trx);
  return Number(result.numAffectedRows ?? 0n);
}

/** Records of one merchant and environment that an attempt may take now: pending or failed, scheduled, not held by a
 * live lease. */
const retryable = (db: Kysely<Database>, scope: ClockScope) =>
  db
    .selectFrom('webhook_deliveries')
    .where(inScope(scope))
    .where('status', 'in', ['pending', 'failed'])
    .where('next_attempt_at', 'is not', null)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]));

/** The earliest next attempt of a merchant's records that an attempt may take (on its clock), or null. */
export async function nextAttemptDue(db: Kysely<Database>, scope: ClockScope): Promise<Date | null> {
  return earliestDue(retryable(db, scope), 'next_attempt_at');
}

/** One record, by id (the operator's view). */
export async function deliveryById(db: Db, rawId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', withPrefix('whd', rawId)).executeTakeFirst();
}

/** A record's attempts, newest first, at most `limit` (the operator's view). */
export async function attemptsOf(db: Db, deliveryId: string, limit: number) {
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt', 'desc')
    .limit(limit)
    .execute();
}
