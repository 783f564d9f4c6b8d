/** Exchange's SQL: directions, orders, the daily totals behind the limits, the expiry claims. */
import { sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import { claimStatusMove } from '../../db/status-move.js';
import type { Database, Environment, Db } from '../../db/schema.js';
import { earliestDue } from '../../db/earliest-due.js';
import { inScope, ownedBy } from '../../db/owned-by.js';
import { inRows } from '../../db/in-rows.js';
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
import { insertInOrder } from '../../db/returned-rows.js';

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

// A batch of market orders (market-orders.ts): each look-up once for the whole batch.

export const directionKey = (environment: string, from: string, to: string) => `${environment}|${from}|${to}`;

/** The directions of many (environment, from, to), keyed by `directionKey`; one statement. */
export async function directionsOf(
  db: Db,
  sides: readonly { environment: Environment; from: string; to: string }[],
): Promise<Map<string, DirectionRow>> {
  if (sides.length === 0) return new Map();
  const rows = await db
    .selectFrom('exchange_directions')
    .selectAll()
    .where(
      inRows(
        ['environment', 'from_asset', 'to_asset'],
        sides.map((s) => [s.environment, s.from, s.to]),
      ),
    )
    .execute();
  return new Map(rows.map((d) => [directionKey(d.environment, d.from_asset, d.to_asset), d]));
}

/** Members' KYC level and status (the execution's KYC gate) and external ids (their events), by id; one statement. */
export async function membersKyc(
  db: Db,
  memberIds: readonly string[],
): Promise<Map<string, { kyc_level: number; status: string; external_member_id: string }>> {
  if (memberIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('members')
    .select(['id', 'kyc_level', 'status', 'external_member_id'])
    .where('id', '=', sql<string>`ANY(${[...new Set(memberIds)]}::text[])`)
    .execute();
  return new Map(rows.map((m) => [m.id, m]));
}

/**
 * Serialises a member's executions in one direction to the end of the transaction, so the daily
 * totals read next cannot be overtaken; many (direction, member) pairs in one statement, in one
 * order (the keys sorted): two batches wanting the same pairs cannot wait on each other in a cycle.
 */
export async function lockMemberDirections(
  trx: Transaction<Database>,
  pairs: readonly { directionId: string; memberId: string }[],
): Promise<void> {
  if (pairs.length === 0) return;
  const keys = [...new Set(pairs.map((p) => `exchange:${p.directionId}:member:${p.memberId}`))].sort();
  await sql`
    SELECT count(pg_advisory_xact_lock(hashtext(k)))
    FROM (SELECT k FROM unnest(${keys}::text[]) AS k ORDER BY k) AS sorted
  `.execute(trx);
}

const memberDayKey = (directionId: string, memberId: string, day: string) => `${directionId}|${memberId}|${day}`;

/**
 * What members executed in a direction on one day of its merchant's clock (amount in from-asset
 * minor units, count), for many (direction, member, day): a look-up (nothing executed: zero); one
 * statement.
 */
export async function dailyTotalsOf(
  db: Db,
  days: readonly { directionId: string; memberId: string; day: string }[],
): Promise<(directionId: string, memberId: string, day: string) => { amount: bigint; count: number }> {
  if (days.length === 0) return () => ({ amount: 0n, count: 0 });
  const rows = await db
    .selectFrom('exchange_orders')
    .select([
      'direction_id',
      'member_id',
      sql<string>`value_day::text`.as('day'),
      sql<string>`sum(from_amount)`.as('amount'),
      sql<string>`count(*)`.as('count'),
    ])
    .where(
      inRows(
        ['direction_id', 'member_id', 'value_day'],
        days.map((d) => [d.directionId, d.memberId, d.day]),
        { value_day: 'date' },
      ),
    )
    .where('status', '=', 'completed')
    .groupBy(['direction_id', 'member_id', 'value_day'])
    .execute();
  const totals = new Map(
    rows.map((r) => [
      memberDayKey(r.direction_id, r.member_id, r.day),
      { amount: minorFromDb(r.amount), count: Number(r.count) },
    ]),
  );
  return (directionId, memberId, day) =>
    totals.get(memberDayKey(directionId, memberId, day)) ?? { amount: 0n, count: 0 };
}

/** New orders, one statement; answered in the order given. */
export function insertOrders(
  trx: Transaction<Database>,
  values: readonly Insertable<ExchangeOrdersTable>[],
): Promise<ExchangeOrderRow[]> {
  return insertInOrder(trx, 'exchange_orders', values);
}
