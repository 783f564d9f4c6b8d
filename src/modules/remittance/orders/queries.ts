/**
 * Remittance orders' SQL: reads, the daily totals behind the limits, the dispatch claim, and the
 * return watch's reads and claims.
 */
import { sql, type Insertable, type RawBuilder, type Transaction } from 'kysely';
import { earliestDue } from '../../../db/earliest-due.js';
import { ownedBy, inScope } from '../../../db/owned-by.js';
import type { Database } from '../../../db/schema.js';
import { minorFromDb } from '../../../money/index.js';
import { withPrefix } from '../../../platform/ids.js';
import { statusesOf, type PublicStatus } from './state.js';
import type { RemitOrderRow, RemitOrdersTable } from './tables.js';
import type { Db } from '../payees/queries.js';
import type { Caller } from '../../../platform/caller.js';
import type { ClockScope } from '../../../platform/clock.js';
import { orderNowSql } from '../../../provider-orders/index.js';
import { getAsset } from '../../assets/index.js';
import { insertInOrder } from '../../../db/returned-rows.js';

export async function findOrder(db: Db, id: string, caller?: Caller): Promise<RemitOrderRow | undefined> {
  let q = db.selectFrom('remit_orders').selectAll().where('id', '=', withPrefix('rmt', id));
  if (caller) q = q.where(ownedBy(caller));
  return q.executeTakeFirst();
}

/** Orders by id (prefixed), one statement; those not found are left out. */
export async function findOrders(db: Db, ids: readonly string[]): Promise<RemitOrderRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('remit_orders')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}

export function ordersQuery(db: Db, caller: Caller, status?: PublicStatus) {
  let q = db.selectFrom('remit_orders').selectAll().where(ownedBy(caller));
  if (status) q = q.where('status', 'in', statusesOf(status));
  return q;
}

/** An order's place in the daily limits: its corridor, member and merchant, and its day on the merchant's clock. */
export interface OrderDay {
  corridorId: string;
  memberId: string;
  merchantId: string;
  day: string;
}

/**
 * Serialises orders of one corridor for one member, and for its merchant, to the end of the
 * transaction, so the daily totals read next cannot be overtaken by a concurrent order: the keys
 * of many orders in one statement, sorted (docs/remittance.md, "Orders sent together").
 */
export async function lockDailyTotals(trx: Transaction<Database>, orders: readonly OrderDay[]): Promise<void> {
  if (orders.length === 0) return;
  const keys = [
    ...new Set(
      orders.flatMap((o) => [
        `remit:${o.corridorId}:member:${o.memberId}`,
        `remit:${o.corridorId}:merchant:${o.merchantId}`,
      ]),
    ),
  ].sort();
  await sql`
    SELECT count(pg_advisory_xact_lock(hashtext(k)))
    FROM (SELECT k FROM unnest(${keys}::text[]) AS k ORDER BY k) AS sorted
  `.execute(trx);
}

/**
 * Payout already committed on each order's day in its corridor (failed orders do not count), for
 * its member and for its merchant; one statement for many orders, answered in their order.
 */
export async function dailyTotals(
  trx: Transaction<Database>,
  orders: readonly OrderDay[],
): Promise<{ member: bigint; merchant: bigint }[]> {
  if (orders.length === 0) return [];
  const { rows } = await sql<{ i: string; member: string; merchant: string }>`
    SELECT t.i, s.member, s.merchant
    FROM unnest(${orders.map((o) => o.corridorId)}::text[], ${orders.map((o) => o.merchantId)}::text[],
                ${orders.map((o) => o.memberId)}::text[], ${orders.map((o) => o.day)}::date[])
           WITH ORDINALITY AS t(corridor_id, merchant_id, member_id, value_day, i)
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(o.payout_amount) FILTER (WHERE o.member_id = t.member_id), 0)::text AS member,
             coalesce(sum(o.payout_amount), 0)::text AS merchant
      FROM remit_orders o
      WHERE o.corridor_id = t.corridor_id AND o.merchant_id = t.merchant_id AND o.value_day = t.value_day
        AND o.status <> 'failed'
    ) AS s
    ORDER BY t.i`.execute(trx);
  return rows.map((r) => ({ member: minorFromDb(r.member), merchant: minorFromDb(r.merchant) }));
}

/** An asset's scale, from the catalogue (the assets area's, held per process). */
export async function scaleOf(db: Db, code: string): Promise<number> {
  return (await getAsset(db, code))?.scale ?? 2;
}

/** The merchant's time, order by order (the shared lifecycle's `orderNowSql` for `remit_orders`). */
const orderNow = () => orderNowSql({ table: 'remit_orders' });

// ---------------------------------------------------------------------------------------------
// Dispatch (dispatch.ts) and completion (apply.ts)

/** The order's member's external id, as a column of a claim's RETURNING on `remit_orders`. */
export const externalMemberIdSql = () =>
  sql<string | null>`(SELECT m.external_member_id FROM members m WHERE m.id = remit_orders.member_id)`.as(
    'external_member_id',
  );

/** The order's payee's reference at the provider, as a column of the claim's RETURNING (null: not registered). */
export const payeeRefSql = () =>
  sql<string | null>`(SELECT e.provider_payee_ref FROM remit_payee_entities e WHERE e.id = remit_orders.entity_id)`.as(
    'payee_ref',
  );
/** The claim's condition of an order whose payee is registered with the provider. */
export const payeeRegisteredSql = () =>
  sql<boolean>`EXISTS (SELECT 1 FROM remit_payee_entities e
    WHERE e.id = remit_orders.entity_id AND e.provider_payee_ref IS NOT NULL)`;

/** A completed payout's first return check: the first offset after the completion, on the merchant's clock. */
export const firstReturnCheckSql = (offsetSeconds: number) =>
  sql<Date>`${orderNow()} + ${offsetSeconds} * interval '1 second'`;

// ---------------------------------------------------------------------------------------------
// The return watch (return-watch.ts)

/** Which completed orders have a return check due: one scope's at `now`, or every merchant's at its own time. */
export function returnCheckDueSql(scope?: ClockScope, now?: Date): RawBuilder<boolean> {
  return scope && now
    ? // `now` has milliseconds, the stored times microseconds (the database's clock): a check due
      // within the millisecond `now` names is due, as `nextDue` (also in milliseconds) said it was.
      sql<boolean>`merchant_id = ${scope.merchantId} AND environment = ${scope.environment} AND return_check_at <
          ${now}::timestamptz + interval '1 millisecond'`
    : // Every merchant: a range on the index first (no merchant's clock is ahead by more than the
      // largest offset), then each order against its own merchant's time.
      sql<boolean>`return_check_at <= now() + (SELECT COALESCE(max(offset_ms), 0) FROM sandbox_clocks) * interval
          '1 millisecond' AND return_check_at <= ${orderNow()}`;
}

export async function dueReturnChecks(db: Db, due: RawBuilder<boolean>, limit: number): Promise<{ id: string }[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM remit_orders WHERE status = 'completed' AND return_check_at IS NOT NULL AND ${due}
    ORDER BY return_check_at LIMIT ${limit}`.execute(db);
  return rows;
}

/** Claims one due order for `leaseSeconds` (its next check pushed out); undefined when another run took it. */
export async function claimReturnCheck(
  db: Db,
  id: string,
  due: RawBuilder<boolean>,
  leaseSeconds: number,
): Promise<RemitOrderRow | undefined> {
  const { rows } = await sql<RemitOrderRow>`
      UPDATE remit_orders SET return_check_at = ${orderNow()} + ${leaseSeconds} * interval '1 second'
      WHERE id = ${id} AND status = 'completed' AND return_check_at IS NOT NULL AND ${due}
      RETURNING *`.execute(db);
  return rows[0];
}

/** One more check asked; the next is due `offsetSeconds` after the completion (none: no longer watched). */
export async function recordReturnCheck(
  trx: Transaction<Database>,
  id: string,
  checks: number,
  offsetSeconds: number | undefined,
): Promise<void> {
  await trx
    .updateTable('remit_orders')
    .set({
      return_checks: checks,
      return_check_at:
        offsetSeconds === undefined ? null : sql<Date>`completed_at + ${offsetSeconds} * interval '1 second'`,
    })
    .where('id', '=', id)
    .where('status', '=', 'completed')
    .execute();
}

/** The scope's earliest return check. */
export async function nextReturnCheck(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(
    db
      .selectFrom('remit_orders')
      .where(inScope(scope))
      .where('status', '=', 'completed')
      .where('return_check_at', 'is not', null),
    'return_check_at',
  );
}

// ---------------------------------------------------------------------------------------------
// Creation (service.ts)

/** The members' KYC levels and external ids (the orders' KYC gate and events), by internal id; one statement. */
export async function membersOf(
  db: Db,
  memberIds: readonly string[],
): Promise<Map<string, { merchant_id: string; environment: string; kyc_level: number; external_member_id: string }>> {
  if (memberIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('members')
    .select(['id', 'merchant_id', 'environment', 'kyc_level', 'external_member_id'])
    .where('id', '=', sql<string>`ANY(${[...new Set(memberIds)]}::text[])`)
    .execute();
  return new Map(rows.map((m) => [m.id, m]));
}

/** New orders, one statement; answered in the order given. */
export function insertOrders(
  trx: Transaction<Database>,
  values: readonly Insertable<RemitOrdersTable>[],
): Promise<RemitOrderRow[]> {
  return insertInOrder(trx, 'remit_orders', values);
}
