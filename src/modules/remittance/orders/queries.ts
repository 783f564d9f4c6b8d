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
import type { Caller, MemberScope as MemberCaller } from '../../../platform/caller.js';
import type { ClockScope } from '../../../platform/clock.js';
import { orderNowSql } from '../../../provider-orders/index.js';
import { getAsset } from '../../assets/index.js';
import { resolveMember } from '../../members/index.js';

export async function findOrder(db: Db, id: string, caller?: Caller): Promise<RemitOrderRow | undefined> {
  let q = db.selectFrom('remit_orders').selectAll().where('id', '=', withPrefix('rmt', id));
  if (caller) q = q.where(ownedBy(caller));
  return q.executeTakeFirst();
}

export function ordersQuery(db: Db, caller: Caller, status?: PublicStatus) {
  let q = db.selectFrom('remit_orders').selectAll().where(ownedBy(caller));
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

/** An asset's scale, from the catalogue (the assets area's, held per process). */
export async function scaleOf(db: Db, code: string): Promise<number> {
  return (await getAsset(db, code))?.scale ?? 2;
}

/** The merchant's time, order by order (the shared lifecycle's `orderNowSql` for `remit_orders`). */
const orderNow = () => orderNowSql({ table: 'remit_orders' });

// ---------------------------------------------------------------------------------------------
// Dispatch (dispatch.ts) and completion (apply.ts)

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

/** The member's KYC level (the order's KYC gate), read through the members area in the caller's transaction. */
export async function memberKycLevel(db: Db, caller: MemberCaller): Promise<number> {
  const member = await resolveMember(db, caller.merchantId, caller.environment, caller.memberId);
  if (!member) throw new Error(`no member ${caller.memberId}`);
  return member.kyc_level;
}

export function insertOrder(trx: Transaction<Database>, values: Insertable<RemitOrdersTable>): Promise<RemitOrderRow> {
  return trx.insertInto('remit_orders').values(values).returningAll().executeTakeFirstOrThrow();
}
