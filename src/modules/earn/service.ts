/**
 * Earn (docs/earn.md): products, subscriptions (`POST /v1/earn/orders`: available → earn), the
 * positions, flexible redemption, and the daily process on the merchant's clock: a flexible
 * order's interest is paid every day (`earn.order.settled`, `data.id` = the member's internal id,
 * `status_version` 0); a fixed-term order accrues daily and settles at maturity with principal
 * and interest (`earn.order.settled`, `data.id` = the order id). No event at the start.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { keysetPage, type PageParams } from '../../platform/pagination.js';
import { scopeNowSql } from '../../platform/clock.js';
import {
  earnMaturityLines,
  earnPayoutLines,
  earnRedeemLines,
  earnSubscribeLines,
  formatAmount,
  minorFromDb,
  parseAmount,
  postEntry,
  postEntryOrRefuse,
} from '../../money/index.js';
import { recordEvent } from '../../events/index.js';
import { getAsset } from '../assets/queries.js';
import { aprText, dailyInterest, dayMs, earnEntryKinds, earnReferenceType } from './rules.js';
import type { EarnOrderRow, EarnProductRow } from './tables.js';
import { isoOrNull } from '../../platform/dates.js';
import type { Caller, MemberScope, MerchantScope } from '../../platform/caller.js';

export const earnErrors = {
  subscribe: ['invalid_request', 'product_not_available', 'amount_out_of_range', 'insufficient_balance'],
  redeem: ['not_found', 'state_invalid'],
} as const satisfies Record<string, readonly ErrorCode[]>;

async function scaleOf(db: Db, code: string): Promise<number> {
  const a = await db.selectFrom('assets').select('scale').where('code', '=', code).executeTakeFirst();
  return a?.scale ?? 2;
}

export function productView(p: EarnProductRow, scale: number) {
  return {
    id: p.id,
    asset: p.asset,
    type: p.type,
    term_days: p.term_days,
    apr: aprText(p.apr_bps),
    min_amount: formatAmount(minorFromDb(p.min_amount), scale),
    max_amount: p.max_amount === null ? null : formatAmount(minorFromDb(p.max_amount), scale),
    enabled: p.enabled,
  };
}

export async function listProducts(db: Db, environment: Environment, enabledOnly = true) {
  let q = db.selectFrom('earn_products').selectAll().where('environment', '=', environment);
  if (enabledOnly) q = q.where('enabled', '=', true);
  const rows = await q.orderBy('seq').execute();
  const data = [];
  for (const p of rows) data.push(productView(p, await scaleOf(db, p.asset)));
  return data;
}

function orderView(o: EarnOrderRow, scale: number) {
  return {
    id: o.id,
    position_id: o.position_id,
    product_id: o.product_id,
    asset: o.asset,
    type: o.type,
    term_days: o.term_days,
    apr: aprText(o.apr_bps),
    amount: formatAmount(minorFromDb(o.amount), scale),
    status: o.status,
    status_version: o.status_version,
    interest_accrued: formatAmount(minorFromDb(o.accrued), scale),
    interest_paid: formatAmount(minorFromDb(o.interest_paid), scale),
    started_at: isoOrNull(o.started_at)!,
    matures_at: isoOrNull(o.matures_at),
    settled_at: isoOrNull(o.settled_at),
    redeemed_at: isoOrNull(o.redeemed_at),
    created_at: isoOrNull(o.created_at)!,
  };
}

function positionView(o: EarnOrderRow, scale: number) {
  return {
    id: o.position_id,
    order_id: o.id,
    product_id: o.product_id,
    asset: o.asset,
    type: o.type,
    principal: formatAmount(minorFromDb(o.amount), scale),
    interest_accrued: formatAmount(minorFromDb(o.accrued), scale),
    interest_paid: formatAmount(minorFromDb(o.interest_paid), scale),
    status: o.status === 'active' ? 'active' : 'closed',
    redeemable: o.status === 'active' && o.type === 'flexible',
    started_at: isoOrNull(o.started_at)!,
    matures_at: isoOrNull(o.matures_at),
    next_accrual_at: isoOrNull(o.next_accrual_at),
  };
}

export const viewOrder = async (db: Db, o: EarnOrderRow) => orderView(o, await scaleOf(db, o.asset));
export const viewPosition = async (db: Db, o: EarnOrderRow) => positionView(o, await scaleOf(db, o.asset));

function ordersQuery(db: Db, caller: Caller) {
  let q = db
    .selectFrom('earn_orders')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return q;
}

export async function listOrders(
  db: Db,
  caller: Caller,
  query: PageParams & { status?: 'active' | 'settled' | 'redeemed' },
) {
  let q = ordersQuery(db, caller);
  if (query.status) q = q.where('status', '=', query.status);
  const page = await keysetPage(q, query);
  const data = [];
  for (const o of page.data) data.push(await viewOrder(db, o));
  return { ...page, data };
}

export async function getOrder(db: Db, caller: Caller, id: string) {
  const o = await ordersQuery(db, caller).where('id', '=', withPrefix('ero', id)).executeTakeFirst();
  if (!o) throw new ApiError('not_found', 'No such earn order.');
  return viewOrder(db, o);
}

export async function listPositions(db: Db, caller: Caller, query: PageParams & { status?: 'active' | 'closed' }) {
  let q = ordersQuery(db, caller);
  if (query.status === 'active') q = q.where('status', '=', 'active');
  if (query.status === 'closed') q = q.where('status', '!=', 'active');
  const page = await keysetPage(q, query);
  const data = [];
  for (const o of page.data) data.push(await viewPosition(db, o));
  return { ...page, data };
}

export async function subscribe(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  scope: MemberScope,
  body: { product_id: string; amount: string },
) {
  const product = await trx
    .selectFrom('earn_products')
    .selectAll()
    .where('id', '=', body.product_id.trim())
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
  if (!product || !product.enabled)
    throw new ApiError('product_not_available', 'No such earn product, or it is withdrawn.');
  const asset = await getAsset(trx, product.asset);
  if (!asset?.enabled) throw new ApiError('product_not_available', "The product's asset is not enabled.");
  const amount = parseAmount(body.amount, asset.scale, 'amount');
  if (amount <= 0n) throw new ApiError('invalid_request', 'amount must be greater than zero.');
  if (
    amount < minorFromDb(product.min_amount) ||
    (product.max_amount !== null && amount > minorFromDb(product.max_amount))
  ) {
    throw new ApiError('amount_out_of_range', "amount is outside the product's range.");
  }
  const now = await ctx.clock.now(trx, scope);
  const row = await trx
    .insertInto('earn_orders')
    .values({
      id: newId('ero'),
      position_id: newId('epo'),
      merchant_id: scope.merchantId,
      environment: scope.environment,
      member_id: scope.memberId,
      product_id: product.id,
      asset: product.asset,
      type: product.type,
      term_days: product.term_days,
      apr_bps: product.apr_bps,
      amount: amount.toString(),
      status: 'active',
      status_version: 1,
      started_at: now,
      matures_at: product.type === 'fixed' ? new Date(now.getTime() + product.term_days * dayMs) : null,
      next_accrual_at: new Date(now.getTime() + dayMs),
      settled_at: null,
      redeemed_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await postEntryOrRefuse(trx, {
    environment: scope.environment,
    merchantId: scope.merchantId,
    kind: earnEntryKinds.subscribe,
    referenceType: earnReferenceType,
    referenceId: row.id,
    asset: row.asset,
    lines: earnSubscribeLines(scope.memberId, amount),
  });
  // No event at the start (the reference's Events table).
  return orderView(row, asset.scale);
}

/**
 * Flexible: the days already due are paid first, in this transaction (the ticker may not have run
 * them yet: a redemption must not lose a finished day), then the principal goes back to available;
 * the unfinished day earns nothing. Fixed-term before maturity: `state_invalid`; at or after
 * maturity (not yet settled by the daily process): settled now, principal and interest to available.
 */
export async function redeem(ctx: ServiceContext, trx: Transaction<Database>, scope: MemberScope, positionId: string) {
  const o = await ordersQuery(trx, scope)
    .where('position_id', '=', withPrefix('epo', positionId))
    .forUpdate()
    .executeTakeFirst();
  if (!o) throw new ApiError('not_found', 'No such earn position.');
  if (o.status !== 'active') throw new ApiError('state_invalid', 'The position is closed.');
  const now = await ctx.clock.now(trx, scope);
  if (o.type === 'fixed') {
    const matured = o.matures_at !== null && now.getTime() >= new Date(o.matures_at).getTime();
    if (!matured)
      throw new ApiError(
        'state_invalid',
        'A fixed-term position cannot be redeemed before maturity; it is paid out at maturity.',
      );
    // Matured, and the daily process (a ticker, once a minute) has not settled it yet: the due days
    // run here, the last one settling the order with principal and interest (its event included),
    // exactly as the process would; the closed position is the answer.
    while (await accrueOneDay(trx, o.id, now));
    const settled = await ordersQuery(trx, scope).where('id', '=', o.id).executeTakeFirstOrThrow();
    return viewPosition(trx, settled);
  }
  while (await accrueOneDay(trx, o.id, now));
  const row = await trx
    .updateTable('earn_orders')
    .set((eb) => ({
      status: 'redeemed',
      status_version: eb('status_version', '+', 1),
      redeemed_at: now,
      next_accrual_at: null,
      updated_at: now,
    }))
    .where('id', '=', o.id)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirstOrThrow();
  await postEntry(trx, {
    environment: o.environment,
    merchantId: o.merchant_id,
    kind: earnEntryKinds.redeem,
    referenceType: earnReferenceType,
    referenceId: o.id,
    asset: o.asset,
    lines: earnRedeemLines(o.member_id, minorFromDb(o.amount)),
  });
  return viewPosition(trx, row);
}

// ---------------------------------------------------------------------------------------------
// The daily process

/** Earliest next accrual of the scope's active orders. */
export async function nextAccrual(db: Db, scope: MerchantScope): Promise<Date | null> {
  const row = await db
    .selectFrom('earn_orders')
    .select((eb) => eb.fn.min('next_accrual_at').as('at'))
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return row?.at ? new Date(row.at as unknown as string | Date) : null;
}

/**
 * One day of one order, in the caller's transaction, if it is due at `now` (the row is locked;
 * a concurrent run finds it moved on and does nothing). Returns whether a day was processed.
 */
async function accrueOneDay(trx: Transaction<Database>, id: string, now: Date | null): Promise<boolean> {
  let q = trx.selectFrom('earn_orders').selectAll().where('id', '=', id).where('status', '=', 'active');
  q = now
    ? q.where('next_accrual_at', '<=', now)
    : q.where(
        'next_accrual_at',
        '<=',
        scopeNowSql(sql.ref('earn_orders.merchant_id'), sql.ref('earn_orders.environment')),
      );
  const o = await q.forUpdate().skipLocked().executeTakeFirst();
  if (!o || !o.next_accrual_at) return false;
  const day = o.days_accrued + 1;
  const principal = minorFromDb(o.amount);
  const interest = dailyInterest(principal, o.apr_bps);
  const dueAt = new Date(o.next_accrual_at);
  const nextAt = new Date(dueAt.getTime() + dayMs);
  const externalMemberId =
    (await trx.selectFrom('members').select('external_member_id').where('id', '=', o.member_id).executeTakeFirst())
      ?.external_member_id ?? '';
  const base = {
    environment: o.environment,
    merchantId: o.merchant_id,
    referenceType: earnReferenceType,
    referenceId: o.id,
    asset: o.asset,
  };
  if (o.type === 'flexible') {
    await trx
      .updateTable('earn_orders')
      .set({
        days_accrued: day,
        interest_paid: (minorFromDb(o.interest_paid) + interest).toString(),
        next_accrual_at: nextAt,
        updated_at: dueAt,
      })
      .where('id', '=', o.id)
      .execute();
    if (interest > 0n) {
      await postEntry(trx, {
        ...base,
        kind: earnEntryKinds.payout(day),
        lines: earnPayoutLines({ memberId: o.member_id, merchantId: o.merchant_id }, interest),
      });
      await recordEvent(trx, {
        merchantId: o.merchant_id,
        environment: o.environment,
        type: 'earn.order.settled',
        object: 'earn_order',
        objectId: o.member_id,
        externalMemberId,
        status: 'settled',
        statusVersion: 0,
      });
    }
    return true;
  }
  const accrued = minorFromDb(o.accrued) + interest;
  if (day < o.term_days) {
    await trx
      .updateTable('earn_orders')
      .set({ days_accrued: day, accrued: accrued.toString(), next_accrual_at: nextAt, updated_at: dueAt })
      .where('id', '=', o.id)
      .execute();
    return true;
  }
  const settled = await trx
    .updateTable('earn_orders')
    .set((eb) => ({
      days_accrued: day,
      accrued: '0',
      interest_paid: (minorFromDb(o.interest_paid) + accrued).toString(),
      status: 'settled',
      status_version: eb('status_version', '+', 1),
      settled_at: o.matures_at ?? dueAt,
      next_accrual_at: null,
      updated_at: dueAt,
    }))
    .where('id', '=', o.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await postEntry(trx, {
    ...base,
    kind: earnEntryKinds.mature,
    lines: earnMaturityLines({ memberId: o.member_id, merchantId: o.merchant_id }, principal, accrued),
  });
  await recordEvent(trx, {
    merchantId: o.merchant_id,
    environment: o.environment,
    type: 'earn.order.settled',
    object: 'earn_order',
    objectId: o.id,
    externalMemberId,
    status: 'settled',
    statusVersion: settled.status_version,
  });
  return true;
}

/**
 * Runs every day due: for one scope at `now` (its clock; the sandbox advance), or for every
 * merchant at its own time (the ticker). Each order-day is its own transaction.
 */
export async function runDueAccruals(
  ctx: ServiceContext,
  batchMax: number,
  scope?: MerchantScope,
  now?: Date,
): Promise<void> {
  for (;;) {
    let q = ctx.db.selectFrom('earn_orders').select('id').where('status', '=', 'active');
    q =
      scope && now
        ? q
            .where('merchant_id', '=', scope.merchantId)
            .where('environment', '=', scope.environment)
            .where('next_accrual_at', '<=', now)
        : q.where(
            'next_accrual_at',
            '<=',
            scopeNowSql(sql.ref('earn_orders.merchant_id'), sql.ref('earn_orders.environment')),
          );
    const due = await q.orderBy('next_accrual_at').limit(batchMax).execute();
    if (due.length === 0) return;
    let progressed = false;
    for (const { id } of due) {
      const moved = await ctx.db.transaction().execute((trx) => accrueOneDay(trx, id, scope && now ? now : null));
      progressed ||= moved;
    }
    if (!progressed) return;
  }
}
