import { sql, type Insertable, type Selectable, type Transaction, type Updateable } from 'kysely';
import type { Database, Db } from '../../../db/schema.js';
import { inScope } from '../../../db/owned-by.js';
import { withPrefix } from '../../../platform/ids.js';
import type { Caller } from '../../../platform/caller.js';
import type { WebhookEndpointsTable } from '../tables.js';
import { endpointsLockSql } from './fan-out.js';

/** Reads and writes of a merchant's webhook endpoints (service.ts, delivery.ts). */

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/** Serialises endpoint changes of one merchant and environment (the per-merchant bound). */
export async function lockMerchantEndpoints(trx: Transaction<Database>, caller: Caller): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${endpointsLockSql(caller.merchantId, caller.environment)})`.execute(trx);
}

/** The merchant's endpoints not deleted, counted (the per-merchant bound). */
export async function countLiveEndpoints(trx: Transaction<Database>, caller: Caller): Promise<number> {
  const { count } = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where(inScope(caller))
    .where('status', '!=', 'deleted')
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertEndpoint(
  trx: Transaction<Database>,
  values: Insertable<WebhookEndpointsTable>,
): Promise<EndpointRow> {
  return trx.insertInto('webhook_endpoints').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The merchant's endpoints not deleted, newest first, at most `limit`. */
export async function listLiveEndpoints(db: Db, caller: Caller, limit: number): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where(inScope(caller))
    .where('status', '!=', 'deleted')
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

/** One endpoint of the merchant (any status), locked with `forUpdate`. */
export async function findEndpoint(
  db: Db,
  caller: Caller,
  id: string,
  forUpdate = false,
): Promise<EndpointRow | undefined> {
  let q = db.selectFrom('webhook_endpoints').selectAll().where('id', '=', withPrefix('whe', id)).where(inScope(caller));
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Deleted, its secrets wiped. */
export async function markEndpointDeleted(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'deleted', secret: '', previous_secret: null, previous_secret_expires_at: null, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Writes the changes of one endpoint; answers the row as written. */
export async function updateEndpointRow(
  trx: Transaction<Database>,
  id: string,
  changes: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow> {
  return trx
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The merchant's enabled endpoints (id and event types), oldest first. */
export async function enabledEndpoints(trx: Transaction<Database>, caller: Caller) {
  return trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'event_types'])
    .where(inScope(caller))
    .where('status', '=', 'enabled')
    .orderBy('seq')
    .execute();
}

/** Disables an enabled endpoint (a 410, or a streak too long); answers it, or nothing if it was not enabled. */
export async function disableEnabledEndpoint(
  trx: Transaction<Database>,
  id: string,
  reason: 'gone' | 'failing',
  now: Date,
) {
  return trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'enabled')
    .returning(['id', 'merchant_id', 'environment', 'event_types'])
    .executeTakeFirst();
}

/** An endpoint as the operator sees it (never its secret). */
export async function endpointForOperator(db: Db, id: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'status', 'disabled_reason', 'failing_since'])
    .where('id', '=', id)
    .executeTakeFirst();
}
