import type { Db, Environment } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';

/** Reads of the API call log and the webhooks area's tables the console's pages show. */

/** The newest API calls, at most `limit`, before the id `before` when given (the log's own bigserial). */
export async function apiCalls(db: Db, merchantId: string, environment: Environment, limit: number, before?: bigint) {
  let q = db.selectFrom('api_call_logs').selectAll().where(inScope({ merchantId, environment }));
  if (before !== undefined) q = q.where('id', '<', before.toString() as unknown as bigint);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

export async function deliveryAttempts(db: Db, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('id')
    .limit(2000)
    .execute();
}

export async function endpointUrls(db: Db, merchantId: string, environment: Environment): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url'])
    .where(inScope({ merchantId, environment }))
    .limit(1000)
    .execute();
  return new Map(rows.map((r) => [r.id, r.url]));
}

/** The endpoint each delivery is bound to (the list view of the webhooks area leaves it out). */
export async function deliveryEndpoints(db: Db, ids: readonly string[]): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'endpoint_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.endpoint_id]));
}

/** An event's deliveries, oldest first (at most 50). */
export async function eventDeliveries(db: Db, merchantId: string, eventId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .select(['id', 'status', 'attempts', 'endpoint_id', 'created_at'])
    .where('event_id', '=', eventId)
    .where('merchant_id', '=', merchantId)
    .orderBy('seq')
    .limit(50)
    .execute();
}

/** An endpoint's deliveries, newest first (at most 50). */
export async function endpointDeliveries(db: Db, merchantId: string, environment: Environment, endpointId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where(inScope({ merchantId, environment }))
    .orderBy('seq', 'desc')
    .limit(50)
    .execute();
}
