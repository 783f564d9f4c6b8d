/** Remittance orders' SQL: reads, the daily totals behind the limits, and the reconciliation claim. */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { minorFromDb } from '../../../money/index.js';
import { withPrefix } from '../../../platform/ids.js';
import { statusesOf, type PublicStatus } from './state.js';
import type { RemitOrderRow } from './tables.js';
import type { Db } from '../payees/queries.js';
import type { Caller } from '../../../platform/caller.js';

export async function findOrder(db: Db, id: string, caller?: Caller): Promise<RemitOrderRow | undefined> {
  let q = db.selectFrom('remit_orders').selectAll().where('id', '=', withPrefix('rmt', id));
  if (caller) {
    q = q.where('merchant_id', '=', caller.merchantId).where('environment', '=', caller.environment);
    if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  }
  return q.executeTakeFirst();
}

export function ordersQuery(db: Db, caller: Caller, status?: PublicStatus) {
  let q = db
    .selectFrom('remit_orders')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  if (status) q = q.where('status', 'in', statusesOf(status));
  return q;
}

/**
 * Serialises orders of one corridor for one member, then for its merchant, to the end of the
 * transaction (always in that order, so two orders never wait on each other crosswise): the daily
 * totals read next cannot be overtaken by a concurrent order.
 */
export async function lockDailyTotals(
  trx: Transaction<Database>,
  corridorId: string,
  memberId: string,
  merchantId: string,
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`remit:${corridorId}:member:${memberId}`}))`.execute(trx);
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`remit:${corridorId}:merchant:${merchantId}`}))`.execute(trx);
}

/** Payout already committed on a day in a corridor (failed orders do not count), for a member and for its merchant. */
export async function dailyTotals(
  trx: Transaction<Database>,
  corridorId: string,
  day: string,
  memberId: string,
  merchantId: string,
): Promise<{ member: bigint; merchant: bigint }> {
  const row = await trx
    .selectFrom('remit_orders')
    .select([
      sql<string>`coalesce(sum(payout_amount) FILTER (WHERE member_id = ${memberId}), 0)`.as('member'),
      sql<string>`coalesce(sum(payout_amount), 0)`.as('merchant'),
    ])
    .where('corridor_id', '=', corridorId)
    .where('merchant_id', '=', merchantId)
    .where('value_day', '=', day)
    .where('status', '!=', 'failed')
    .executeTakeFirstOrThrow();
  return { member: minorFromDb(row.member), merchant: minorFromDb(row.merchant) };
}

export async function externalIdOf(db: Db, memberId: string): Promise<string> {
  const m = await db.selectFrom('members').select('external_member_id').where('id', '=', memberId).executeTakeFirst();
  return m?.external_member_id ?? '';
}

export async function scaleOf(db: Db, code: string): Promise<number> {
  const a = await db.selectFrom('assets').select('scale').where('code', '=', code).executeTakeFirst();
  return a?.scale ?? 2;
}
