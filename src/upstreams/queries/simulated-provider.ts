import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { UpstreamName } from '../port.js';
import type { UpstreamSimOrdersTable } from '../tables.js';

/** The simulated provider's books (upstreams/simulated-provider.ts): `upstream_sim_orders`. */

type SimRow = Selectable<UpstreamSimOrdersTable>;

/** A succeeded (or already refunded) order marked refunded: its provider order id, or undefined. */
export async function markSimOrderRefunded(
  db: Kysely<Database>,
  upstream: UpstreamName,
  requestId: string,
): Promise<{ provider_order_id: string } | undefined> {
  return db
    .updateTable('upstream_sim_orders')
    .set({ status: 'refunded', final_status: 'refunded', updated_at: sql<Date>`now()` })
    .where('upstream', '=', upstream)
    .where('request_id', '=', requestId)
    .where('status', 'in', ['succeeded', 'refunded'])
    .returning('provider_order_id')
    .executeTakeFirst();
}

/** A processing order whose confirmation time has passed, moved to its final state; undefined otherwise. */
export async function settleSimOrder(
  db: Kysely<Database>,
  upstream: UpstreamName,
  requestId: string,
): Promise<SimRow | undefined> {
  return db
    .updateTable('upstream_sim_orders')
    .set((eb) => ({ status: eb.ref('final_status'), updated_at: sql<Date>`now()` }))
    .where('upstream', '=', upstream)
    .where('request_id', '=', requestId)
    .where('status', '=', 'processing')
    .where('settle_at', '<=', sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
}

/** A request's record in the books; the KYC simulator keeps its checks there too (upstream `kyc`). */
export async function selectSimOrder(
  db: Kysely<Database>,
  upstream: UpstreamName | 'kyc',
  requestId: string,
): Promise<SimRow | undefined> {
  return db
    .selectFrom('upstream_sim_orders')
    .selectAll()
    .where('upstream', '=', upstream)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
}

/** A request's record, unless one with its id exists (then undefined); it settles `settleAfterSeconds` from now. */
export async function insertSimOrder(
  db: Kysely<Database>,
  o: Pick<
    SimRow,
    'request_id' | 'merchant_id' | 'environment' | 'provider_order_id' | 'operation' | 'status' | 'final_status'
  > & { upstream: UpstreamName; settleAfterSeconds: number; unknown_status: boolean; detail: string },
): Promise<SimRow | undefined> {
  return db
    .insertInto('upstream_sim_orders')
    .values({
      upstream: o.upstream,
      request_id: o.request_id,
      merchant_id: o.merchant_id,
      environment: o.environment,
      provider_order_id: o.provider_order_id,
      operation: o.operation,
      status: o.status,
      final_status: o.final_status,
      settle_at: sql<Date>`now() + make_interval(secs => ${o.settleAfterSeconds})` as unknown as Date,
      unknown_status: o.unknown_status,
      detail: o.detail,
      updated_at: sql<Date>`now()`,
    })
    .onConflict((oc) => oc.columns(['upstream', 'request_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}
