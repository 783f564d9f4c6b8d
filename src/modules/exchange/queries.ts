/** Exchange's SQL: directions, orders, the daily totals behind the limits, the expiry claims. */
import { sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import { claimStatusMove } from '../../db/status-move.js';
import type { Database, Environment, Db } from '../../db/schema.js';
import { earliestDue } from '../../db/earliest-due.js';
import { inScope, ownedBy } from '../../db/owned-by.js';
import { minorFromDb } from '../../money/index.js';
import { withPrefix } from '../../platform/ids.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import type { DirectionLimits } from './rules.js';
import type {
  ConversionRow,
  DirectionRow,
  ExchangeDirectionsTable,
  ExchangeOrderRow,
  ExchangeOrdersTable,
  MerchantConversionsTable,
  OrderStatus,
} from './tables.js';
import type { Caller, MerchantScope } from '../../platform/caller.js';

export type { Db } from '../../db/schema.js';

export async function findDirection(
  db: Db,
  environment: Environment,
  from: string,
  to: string,
): Promise<DirectionRow | undefined> {
  return db
    .selectFrom('exchange_directions')
    .selectAll()
    .where('environment', '=', environment)
    .where('from_asset', '=', from)
    .where('to_asset', '=', to)
    .executeTakeFirst();
}

export async function directionById(db: Db, id: string): Promise<DirectionRow | undefined> {
  return db.selectFrom('exchange_directions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function directionsQuery(db: Db, environment: Environment) {
  return db.selectFrom('exchange_directions').selectAll().where('environment', '=', environment);
}

const nullableMinor = (v: string | bigint | null): bigint | null => (v === null ? null : minorFromDb(v));

export const limitsOf = (d: DirectionRow): DirectionLimits => ({
  minAmount: minorFromDb(d.min_amount),
  maxAmount: nullableMinor(d.max_amount),
  memberDailyAmount: nullableMinor(d.member_daily_amount),
  memberDailyCount: d.member_daily_count,
});

export const stepUpThresholdOf = (d: DirectionRow): bigint | null => nullableMinor(d.step_up_threshold);

export async function findOrder(
  db: Db,
  id: string,
  caller: Caller,
  forUpdate = false,
): Promise<ExchangeOrderRow | undefined> {
  const q = ordersQuery(db, caller).where('id', '=', withPrefix('exc', id));
  return forUpdate ? q.forUpdate().executeTakeFirst() : q.executeTakeFirst();
}

export function ordersQuery(db: Db, caller: Caller, status?: OrderStatus) {
  let q = db.selectFrom('exchange_orders').selectAll().where(ownedBy(caller));
  if (status) q = q.where('status', '=', status);
  return q;
}

/** Serialises a member's executions in one direction to the end of the transaction, so the daily totals read next
 * cannot be overtaken. */
export async function lockMemberDirection(
  trx: Transaction<Database>,
  directionId: string,
  memberId: string,
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`exchange:${directionId}:member:${memberId}`}))`.execute(trx);
}

/** What a member executed in a direction on one day of its merchant's clock (amount in from-asset minor units, count).
 * */
export async function dailyTotals(
  db: Db,
  directionId: string,
  memberId: string,
  day: string,
): Promise<{ amount: bigint; count: number }> {
  const row = await db
    .selectFrom('exchange_orders')
    .select([sql<string>`coalesce(sum(from_amount), 0)`.as('amount'), sql<string>`count(*)`.as('count')])
    .where('direction_id', '=', directionId)
    .where('member_id', '=', memberId)
    .where('value_day', '=', day)
    .where('status', '=', 'completed')
    .executeTakeFirstOrThrow();
  return { amount: minorFromDb(row.amount), count: Number(row.count) };
}

/** Earliest lock end of the scope's quoted orders (the expiry process's next due time). */
export async function nextQuoteExpiry(db: Db, scope: MerchantScope): Promise<Date | null> {
  const quoted = db.selectFrom('exchange_orders').where(inScope(scope)).where('status', '=', 'quoted');
  return earliestDue(quoted, 'quote_expires_at');
}

/**
 * Voids quoted orders whose lock ended: one conditional UPDATE (the claim), so a concurrent
 * execution (which holds the row lock and checks the time) and this never both win. `scope`
 * limits it to one merchant and `now` is that merchant's time; without a scope each row is
 * compared with its own merchant's time (the background ticker). Returns the voided rows.
 */
export async function expireQuotes(
  db: Db,
  batchMax: number,
  scope?: MerchantScope,
  now?: Date,
): Promise<ExchangeOrderRow[]> {
  return db
    .updateTable('exchange_orders')
    .set((eb) => ({
      status: 'expired',
      status_version: eb('status_version', '+', 1),
      expired_at: eb.ref('quote_expires_at'),
      updated_at: sql<Date>`quote_expires_at`,
    }))
    .where('id', 'in', (eb) => {
      let q = eb.selectFrom('exchange_orders as o').select('o.id').where('o.status', '=', 'quoted');
      q =
        scope && now
          ? q
              .where('o.merchant_id', '=', scope.merchantId)
              .where('o.environment', '=', scope.environment)
              .where('o.quote_expires_at', '<=', now)
          : q.where('o.quote_expires_at', '<=', scopeNowSql(sql.ref('o.merchant_id'), sql.ref('o.environment')));
      return q.orderBy('o.quote_expires_at').limit(batchMax).forUpdate().skipLocked();
    })
    .where('status', '=', 'quoted')
    .returningAll()
    .execute();
}

export async function scaleOf(db: Db, code: string): Promise<number> {
  const a = await db.selectFrom('assets').select('scale').where('code', '=', code).executeTakeFirst();
  return a?.scale ?? 2;
}

/** Every direction (of one environment when asked), for the operator's paged list. */
export function allDirectionsQuery(db: Db, environment?: Environment) {
  let q = db.selectFrom('exchange_directions').selectAll();
  if (environment) q = q.where('environment', '=', environment);
  return q;
}

export async function assetExists(db: Db, code: string): Promise<boolean> {
  return !!(await db.selectFrom('assets').select('code').where('code', '=', code).executeTakeFirst());
}

export function insertDirection(
  trx: Transaction<Database>,
  values: Insertable<ExchangeDirectionsTable>,
): Promise<DirectionRow> {
  return trx.insertInto('exchange_directions').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateDirectionRow(
  trx: Transaction<Database>,
  id: string,
  set: Updateable<ExchangeDirectionsTable>,
): Promise<DirectionRow> {
  return trx.updateTable('exchange_directions').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** The member's KYC level and status (the execution's KYC gate). */
export function memberKyc(db: Db, memberId: string) {
  return db.selectFrom('members').select(['kyc_level', 'status']).where('id', '=', memberId).executeTakeFirst();
}

export function insertOrder(
  trx: Transaction<Database>,
  values: Insertable<ExchangeOrdersTable>,
): Promise<ExchangeOrderRow> {
  return trx.insertInto('exchange_orders').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The claim of a locked quote's execution: quoted → completed, or undefined when it is no longer open. */
export function completeQuoted(
  trx: Transaction<Database>,
  id: string,
  now: Date,
  day: string,
): Promise<ExchangeOrderRow | undefined> {
  return claimStatusMove<ExchangeOrderRow>(trx, 'exchange_orders', id, {
    from: 'quoted',
    to: 'completed',
    at: now,
    set: { executed_at: now, value_day: day },
  });
}

export function insertConversion(
  trx: Transaction<Database>,
  values: Insertable<MerchantConversionsTable>,
): Promise<ConversionRow> {
  return trx.insertInto('merchant_conversions').values(values).returningAll().executeTakeFirstOrThrow();
}
