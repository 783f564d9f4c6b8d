// Over 300 lines: an earn order's whole life (subscriptions, redemptions as batch effects, the daily process).
/**
 * Earn (docs/earn.md): products, subscriptions (`POST /v1/earn/orders`: available → earn), the
 * positions, flexible redemption, and the daily process on the merchant's clock: a flexible
 * order's interest is paid every day (`earn.order.settled`, `data.id` = the member's internal id,
 * `status_version` 0); a fixed-term order accrues daily and settles at maturity with principal
 * and interest (`earn.order.settled`, `data.id` = the order id). No event at the start.
 */
import type { Insertable, Transaction } from 'kysely';
import { checkEach, postedOnly, type BatchAnswer } from '../../platform/writes/batch-answers.js';
import type { Database, Environment, Db } from '../../db/schema.js';
import { ownerColumns, rowScope } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId, withPrefix } from '../../platform/ids.js';
import { type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../db/keyset-page.js';
import {
  earnMaturityLines,
  earnPayoutLines,
  earnRedeemLines,
  earnSubscribeLines,
  minorFromDb,
  parseAmount,
  postEntry,
  postRowEntry,
  rowReference,
  postEntries,
  earnEntryKinds,
  lockMerchantWrites,
} from '../../money/index.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import { getAsset } from '../assets/index.js';
import { externalMemberIdOf } from '../members/index.js';
import {
  dueOrderIds,
  findOrder,
  findProduct,
  insertOrders,
  lockDueOrder,
  lockPosition,
  markRedeemed,
  ordersQuery,
  productRows,
  recordDay,
  scaleOf,
  settleOrder,
} from './queries.js';
import { dailyInterest, dayMs, earnReferenceType } from './rules.js';
import { orderView, productView, viewOrder, viewPosition } from './views.js';
import type { EarnOrdersTable } from './tables.js';
import type { Caller, MemberScope, MerchantScope } from '../../platform/caller.js';

export const earnErrors = {
  subscribe: ['invalid_request', 'product_not_available', 'amount_out_of_range', 'insufficient_balance'],
  redeem: ['not_found', 'state_invalid'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export async function listProducts(db: Db, environment: Environment, enabledOnly = true) {
  const rows = await productRows(db, environment, enabledOnly);
  const data = [];
  for (const p of rows) data.push(productView(p, await scaleOf(db, p.asset)));
  return data;
}

export async function listOrders(
  db: Db,
  caller: Caller,
  query: PageParams & { status?: 'active' | 'settled' | 'redeemed' },
) {
  return viewPage(await keysetPage(ordersQuery(db, caller, query.status), query), (o) => viewOrder(db, o));
}

export async function getOrder(db: Db, caller: Caller, id: string) {
  const o = await findOrder(db, caller, withPrefix('ero', id));
  if (!o) throw new ApiError('not_found', 'No such earn order.');
  return viewOrder(db, o);
}

export async function listPositions(db: Db, caller: Caller, query: PageParams & { status?: 'active' | 'closed' }) {
  return viewPage(await keysetPage(ordersQuery(db, caller, query.status), query), (o) => viewPosition(db, o));
}

/** A subscription to write: the member (on whose behalf the call is made) and the body. */
export interface SubscribePlan {
  scope: MemberScope;
  body: { product_id: string; amount: string };
}

type EarnOrderView = ReturnType<typeof orderView>;

/**
 * Subscriptions (available → earn), many of any merchants in a few statements whatever their
 * number (group commit, docs/write-model.md; a lone one is a list of one): each one's product,
 * asset and amount checked, then one statement posts the entries (`postEntries`: a shortfall
 * refuses that subscription alone, later ones see the balances earlier ones left) and one inserts
 * the orders of those that posted. No event at the start (the reference's Events table).
 */
export async function subscribeMany(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly SubscribePlan[],
): Promise<BatchAnswer<EarnOrderView>[]> {
  const answers: BatchAnswer<EarnOrderView>[] = [];
  // Each merchant's time, for the batch in one statement.
  const nows = await ctx.clock.nowOfEach(
    trx,
    plans.map((p) => p.scope),
  );
  const checked = await checkEach(plans, answers, async ({ scope, body }, i) => {
    const product = await findProduct(trx, scope.environment, body.product_id.trim());
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
    const now = nows[i]!;
    const order: Insertable<EarnOrdersTable> = {
      id: newId('ero'),
      position_id: newId('epo'),
      ...ownerColumns(scope),
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
    };
    return { scope, order, amount, scale: asset.scale };
  });
  const outcomes = await postEntries(
    trx,
    checked.map(({ scope, order, amount }) => ({
      entry: {
        environment: scope.environment,
        merchantId: scope.merchantId,
        kind: earnEntryKinds.subscribe,
        referenceType: earnReferenceType,
        referenceId: order.id,
        asset: order.asset,
        lines: earnSubscribeLines(scope.memberId, amount),
      },
    })),
  );
  const posted = postedOnly(checked, outcomes, answers);
  const rows = await insertOrders(
    trx,
    posted.map(({ item }) => item.order),
  );
  for (const [k, { item }] of posted.entries()) answers[item.i] = orderView(rows[k]!, item.scale);
  return answers;
}

/**
 * Flexible: the days already due are paid first, in this transaction (the ticker may not have run
 * them yet: a redemption must not lose a finished day), then the principal goes back to available;
 * the unfinished day earns nothing. Fixed-term before maturity: `state_invalid`; at or after
 * maturity (not yet settled by the daily process): settled now, principal and interest to available.
 */
async function redeem(ctx: ServiceContext, trx: Transaction<Database>, scope: MemberScope, positionId: string) {
  const o = await lockPosition(trx, scope, withPrefix('epo', positionId));
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
    const settled = await findOrder(trx, scope, o.id);
    if (!settled) throw new Error(`earn: order ${o.id} vanished while it settled`);
    return viewPosition(trx, settled);
  }
  while (await accrueOneDay(trx, o.id, now));
  const row = await markRedeemed(trx, o.id, now);
  await postRowEntry(trx, o, {
    kind: earnEntryKinds.redeem,
    referenceType: earnReferenceType,
    asset: o.asset,
    lines: earnRedeemLines(o.member_id, minorFromDb(o.amount)),
  });
  return viewPosition(trx, row);
}

/** A redemption to write: the member and the position's id as the path gave it. */
export interface RedeemPlan {
  scope: MemberScope;
  id: string;
}

/**
 * Redemptions, many of any merchants in one transaction (group commit, docs/write-model.md), each
 * written in turn: a position is locked, its due days paid and its principal returned, so a second
 * redemption of it in the call finds it closed. A refusal (`not_found`, `state_invalid`) comes before
 * anything of its item is written; any other error fails the batch, whose writes then run alone.
 */
export async function redeemMany(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly RedeemPlan[],
): Promise<BatchAnswer<Awaited<ReturnType<typeof viewPosition>>>[]> {
  const answers: BatchAnswer<Awaited<ReturnType<typeof viewPosition>>>[] = [];
  for (const { scope, id } of plans) {
    try {
      answers.push(await redeem(ctx, trx, scope, id));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      answers.push(err);
    }
  }
  return answers;
}

// ---------------------------------------------------------------------------------------------
// The daily process

export { nextAccrual } from './queries.js';

/**
 * One day of one order, in the caller's transaction, if it is due at `now` (the row is locked;
 * a concurrent run finds it moved on and does nothing). Returns whether a day was processed.
 */
async function accrueOneDay(trx: Transaction<Database>, id: string, now: Date | null): Promise<boolean> {
  const o = await lockDueOrder(trx, id, now);
  if (!o || !o.next_accrual_at) return false;
  const day = o.days_accrued + 1;
  const principal = minorFromDb(o.amount);
  const interest = dailyInterest(principal, o.apr_bps);
  const dueAt = new Date(o.next_accrual_at);
  const nextAt = new Date(dueAt.getTime() + dayMs);
  const externalMemberId = await externalMemberIdOf(trx, o.member_id);
  const base = { ...rowReference(o, earnReferenceType), asset: o.asset };
  if (o.type === 'flexible') {
    await recordDay(trx, o.id, {
      days_accrued: day,
      interest_paid: (minorFromDb(o.interest_paid) + interest).toString(),
      next_accrual_at: nextAt,
      updated_at: dueAt,
    });
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
    await recordDay(trx, o.id, {
      days_accrued: day,
      accrued: accrued.toString(),
      next_accrual_at: nextAt,
      updated_at: dueAt,
    });
    return true;
  }
  const settled = await settleOrder(trx, o.id, {
    days_accrued: day,
    interest_paid: (minorFromDb(o.interest_paid) + accrued).toString(),
    settled_at: o.matures_at ?? dueAt,
    updated_at: dueAt,
  });
  await postEntry(trx, {
    ...base,
    kind: earnEntryKinds.mature,
    lines: earnMaturityLines({ memberId: o.member_id, merchantId: o.merchant_id }, principal, accrued),
  });
  await recordEvent(trx, {
    ...rowEnvelope(settled),
    type: 'earn.order.settled',
    object: 'earn_order',
    status: 'settled',
    externalMemberId,
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
    const due = await dueOrderIds(ctx.db, batchMax, scope, now);
    if (due.length === 0) return;
    let progressed = false;
    for (const order of due) {
      // The merchant's write lock before the order's, the order a batch of redemptions takes them in
      // (docs/locking.md): holding the order while waiting for the lock, a day waited in a cycle with one.
      const moved = await ctx.db.transaction().execute(async (trx) => {
        await lockMerchantWrites(trx, rowScope(order));
        return accrueOneDay(trx, order.id, scope && now ? now : null);
      });
      progressed ||= moved;
    }
    if (!progressed) return;
  }
}
