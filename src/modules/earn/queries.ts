/** Earn's SQL: products, orders (a member's positions are its orders), and the daily process's reads and moves. */
import { sql, type Insertable, type Transaction } from 'kysely';
import { claimStatusMove } from '../../db/status-move.js';
import type { Database, Environment, Db } from '../../db/schema.js';
import { earliestDue } from '../../db/earliest-due.js';
import { inScope, ownedBy } from '../../db/owned-by.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import type { Caller, MerchantScope } from '../../platform/caller.js';
import type { EarnOrderRow, EarnOrdersTable, EarnProductRow, EarnProductsTable } from './tables.js';
import { insertInOrder } from '../../db/returned-rows.js';

/** The asset's scale (2 when the asset is unknown). */
export async function scaleOf(db: Db, code: string): Promise<number> {
  const a = await db.selectFrom('assets').select('scale').where('code', '=', code).executeTakeFirst();
  return a?.scale ?? 2;
}

export function productRows(db: Db, environment: Environment, enabledOnly: boolean): Promise<EarnProductRow[]> {
  let q = db.selectFrom('earn_products').selectAll().where('environment', '=', environment);
  if (enabledOnly) q = q.where('enabled', '=', true);
  return q.orderBy('seq').execute();
}

export function findProduct(db: Db, environment: Environment, id: string): Promise<EarnProductRow | undefined> {
  return db
    .selectFrom('earn_products')
    .selectAll()
    .where('id', '=', id)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

export function insertProduct(
  trx: Transaction<Database>,
  values: Insertable<EarnProductsTable>,
): Promise<EarnProductRow> {
  return trx.insertInto('earn_products').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateProduct(
  trx: Transaction<Database>,
  id: string,
  set: { enabled?: boolean; apr_bps?: number; updated_at: Date },
): Promise<EarnProductRow | undefined> {
  return trx.updateTable('earn_products').set(set).where('id', '=', id).returningAll().executeTakeFirst();
}

/** The caller's orders (a member's own, or the merchant's), filtered by status when asked. */
export function ordersQuery(db: Db, caller: Caller, status?: 'active' | 'settled' | 'redeemed' | 'closed') {
  let q = db.selectFrom('earn_orders').selectAll().where(ownedBy(caller));
  if (status === 'closed') q = q.where('status', '!=', 'active');
  else if (status) q = q.where('status', '=', status);
  return q;
}

export const findOrder = (db: Db, caller: Caller, id: string): Promise<EarnOrderRow | undefined> =>
  ordersQuery(db, caller).where('id', '=', id).executeTakeFirst();

export const lockPosition = (trx: Transaction<Database>, caller: Caller, positionId: string) =>
  ordersQuery(trx, caller).where('position_id', '=', positionId).forUpdate().executeTakeFirst();

/** New orders, one statement; the rows answered in the order given. */
export function insertOrders(
  trx: Transaction<Database>,
  values: readonly Insertable<EarnOrdersTable>[],
): Promise<EarnOrderRow[]> {
  return insertInOrder(trx, 'earn_orders', values);
}

/** A flexible order's principal goes back: active → redeemed. */
export async function markRedeemed(trx: Transaction<Database>, id: string, now: Date): Promise<EarnOrderRow> {
  const row = await claimStatusMove<EarnOrderRow>(trx, 'earn_orders', id, {
    from: 'active',
    to: 'redeemed',
    at: now,
    set: { redeemed_at: now, next_accrual_at: null },
  });
  if (!row) throw new Error(`earn: order ${id} was not active when it was redeemed`);
  return row;
}

/** Earliest next accrual of the scope's active orders. */
export async function nextAccrual(db: Db, scope: MerchantScope): Promise<Date | null> {
  const active = db.selectFrom('earn_orders').where(inScope(scope)).where('status', '=', 'active');
  return earliestDue(active, 'next_accrual_at');
}

const orderScopeNow = () => scopeNowSql(sql.ref('earn_orders.merchant_id'), sql.ref('earn_orders.environment'));

/**
 * The order, locked, if a day of it is due at `now` (null: at its merchant's own time); a row
 * another run holds is skipped.
 */
export function lockDueOrder(trx: Transaction<Database>, id: string, now: Date | null) {
  let q = trx.selectFrom('earn_orders').selectAll().where('id', '=', id).where('status', '=', 'active');
  q = now ? q.where('next_accrual_at', '<=', now) : q.where('next_accrual_at', '<=', orderScopeNow());
  return q.forUpdate().skipLocked().executeTakeFirst();
}

/** Ids of the orders with a day due: the scope's at `now`, or every merchant's at its own time. */
export function dueOrderIds(db: Db, batchMax: number, scope?: MerchantScope, now?: Date) {
  let q = db.selectFrom('earn_orders').select(['id', 'merchant_id', 'environment']).where('status', '=', 'active');
  q =
    scope && now
      ? q.where(inScope(scope)).where('next_accrual_at', '<=', now)
      : q.where('next_accrual_at', '<=', orderScopeNow());
  return q.orderBy('next_accrual_at').limit(batchMax).execute();
}

/** A day of an open order: what it paid or accrued, and when the next is due. */
export async function recordDay(
  trx: Transaction<Database>,
  id: string,
  set: { days_accrued: number; interest_paid?: string; accrued?: string; next_accrual_at: Date; updated_at: Date },
): Promise<void> {
  await trx.updateTable('earn_orders').set(set).where('id', '=', id).execute();
}

/** A fixed-term order's last day: accrued interest paid, active → settled. */
export function settleOrder(
  trx: Transaction<Database>,
  id: string,
  set: { days_accrued: number; interest_paid: string; settled_at: Date; updated_at: Date },
): Promise<EarnOrderRow> {
  return trx
    .updateTable('earn_orders')
    .set((eb) => ({
      days_accrued: set.days_accrued,
      accrued: '0',
      interest_paid: set.interest_paid,
      status: 'settled',
      status_version: eb('status_version', '+', 1),
      settled_at: set.settled_at,
      next_accrual_at: null,
      updated_at: set.updated_at,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
