import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Environment } from '../../db/columns.js';

/** The simulated card issuer's books (upstreams/card/simulator.ts): its cards and applications. */

/** Records a card as active. */
export async function markSimCardActivated(db: Kysely<Database>, cardRef: string, now: Date): Promise<void> {
  await db
    .updateTable('upstream_sim_orders')
    .set({ detail: sql<string>`detail || '{"activated":"true"}'::jsonb`, updated_at: now })
    .where('upstream', '=', 'card')
    .where('operation', '=', 'card')
    .where('provider_order_id', '=', cardRef)
    .execute();
}

/** A card's details in the issuer's books. */
export function selectSimCard(db: Kysely<Database>, cardRef: string) {
  return db
    .selectFrom('upstream_sim_orders')
    .select('detail')
    .where('upstream', '=', 'card')
    .where('operation', '=', 'card')
    .where('provider_order_id', '=', cardRef)
    .executeTakeFirst();
}

/** The card of an application, unless it has one already (`card:<request id>`). */
export async function insertSimCard(
  db: Kysely<Database>,
  card: {
    requestId: string;
    merchantId: string;
    environment: Environment;
    cardRef: string;
    detail: Record<string, string>;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('upstream_sim_orders')
    .values({
      upstream: 'card',
      request_id: `card:${card.requestId}`,
      merchant_id: card.merchantId,
      environment: card.environment,
      provider_order_id: card.cardRef,
      operation: 'card',
      status: 'succeeded',
      final_status: 'succeeded',
      settle_at: card.now,
      detail: JSON.stringify(card.detail),
      updated_at: card.now,
    })
    .onConflict((oc) => oc.columns(['upstream', 'request_id']).doNothing())
    .execute();
}

/** The card opened for an application, if any. */
export function selectIssuedSimCard(db: Kysely<Database>, requestId: string) {
  return db
    .selectFrom('upstream_sim_orders')
    .select(['provider_order_id', 'detail'])
    .where('upstream', '=', 'card')
    .where('request_id', '=', `card:${requestId}`)
    .executeTakeFirst();
}

/** The issuer's decision on an application, written into its record. */
export async function recordSimDecision(
  db: Kysely<Database>,
  requestId: string,
  decision: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('upstream_sim_orders')
    .set({ detail: sql<string>`detail || jsonb_build_object('decision', ${decision}::text)`, updated_at: now })
    .where('upstream', '=', 'card')
    .where('request_id', '=', requestId)
    .where('operation', '=', 'application')
    .execute();
}
