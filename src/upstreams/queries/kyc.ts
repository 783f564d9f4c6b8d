import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Environment } from '../../db/columns.js';
import { selectSimOrder } from './simulated-provider.js';

/** The simulated KYC provider's books (upstreams/kyc/simulator.ts): rows of `upstream_sim_orders`, upstream `kyc`. */

const upstream = 'kyc';

/** A check waiting for its reviewer, unless one with its request id exists. */
export async function insertSimKycCheck(
  db: Kysely<Database>,
  check: { requestId: string; merchantId: string; environment: Environment; providerRef: string; now: Date },
): Promise<void> {
  await db
    .insertInto('upstream_sim_orders')
    .values({
      upstream,
      request_id: check.requestId,
      merchant_id: check.merchantId,
      environment: check.environment,
      provider_order_id: check.providerRef,
      operation: 'kyc_check',
      status: 'processing',
      final_status: 'processing',
      settle_at: new Date('9999-12-31T00:00:00Z'),
      detail: JSON.stringify({}),
      updated_at: check.now,
    })
    .onConflict((oc) => oc.columns(['upstream', 'request_id']).doNothing())
    .execute();
}

/** The reviewer's verdict on a waiting check; false when it was not waiting. */
export async function decideSimKycCheck(
  db: Kysely<Database>,
  requestId: string,
  status: 'succeeded' | 'failed',
  detail: { level?: string; reason?: string },
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('upstream_sim_orders')
    .set({ status, final_status: status, detail: JSON.stringify(detail), updated_at: now })
    .where('upstream', '=', upstream)
    .where('request_id', '=', requestId)
    .where('status', '=', 'processing')
    .returning('request_id')
    .executeTakeFirst();
  return row !== undefined;
}

export function selectSimKycCheck(db: Kysely<Database>, requestId: string) {
  return selectSimOrder(db, upstream, requestId);
}
