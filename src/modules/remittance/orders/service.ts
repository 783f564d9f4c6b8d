/**
 * `POST /v1/remittances` and its reads (extensions 10). One transaction creates the order
 * (`pending`, version 1), freezes source amount + fee (available → frozen), writes the event and
 * queues the dispatch job; the provider is called later by that job (dispatch.ts).
 */
import type { Transaction } from 'kysely';
import { pendingOrderColumns } from '../../../provider-orders/index.js';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { parseAmount, postEntryOrRefuse, remitFreezeLines, remitEntryKinds } from '../../../money/index.js';
import { enqueue } from '../../../jobs/queries.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import type { CallContext } from '../../../upstreams/port.js';
import { getAsset } from '../../assets/index.js';
import { minKycLevel, requireHighValueLevel } from '../../kyc/index.js';
import { emitOrderEvent } from './apply.js';
import { corridorById } from '../corridors/queries.js';
import { corridorRefusal, payeeRefusal } from '../corridors/rules.js';
import {
  dailyTotals,
  findOrder,
  insertOrder,
  lockDailyTotals,
  memberKycLevel,
  ordersQuery,
  scaleOf,
} from './queries.js';
import { findActivePayee, payeeIdsOf, type Db, type MemberCaller } from '../payees/queries.js';
import { limitBreach, priceOrder, remitReferenceType } from './rules.js';
import type { PublicStatus } from './state.js';
import type { RemitOrderRow } from './tables.js';
import { orderView } from './views.js';
import type { Caller } from '../../../platform/caller.js';
import { ownerColumns } from '../../../db/owned-by.js';

export const orderErrors = {
  create: [
    'resource_not_found',
    'kyc_required',
    'corridor_not_supported',
    'asset_not_allowed',
    'amount_out_of_range',
    'limit_exceeded',
    'insufficient_balance',
    'upstream_error',
  ],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Job kind of an order's dispatch (workers.ts). */
export const dispatchJobKind = 'remittance.dispatch';

export interface OrderInput {
  payee_id: string;
  source_asset: string;
  source_amount: string;
}

/** What the order is priced with, asked of the providers before the transaction (read-only calls). */
export interface Market {
  /** Mid rate source → payout currency; undefined when the payee is not the member's (the write refuses). */
  midRate?: string;
  /** The provider's earliest payout date for the currency (express line), when it answered. */
  payoutDate?: string;
}

/**
 * Read-only look-ups made outside the order's transaction: the mid rate from the one rate
 * service, and the provider's earliest payout date (an estimate; dispatch sets the real one).
 */
export async function marketFor(ctx: ServiceContext, caller: MemberCaller, input: OrderInput): Promise<Market> {
  const link = await findActivePayee(ctx.db, caller, input.payee_id);
  if (!link) return {};
  const corridor = await corridorById(ctx.db, link.corridor_id);
  if (!corridor) return {};
  const from = input.source_asset.toUpperCase();
  const call: CallContext = caller;
  const deadline = ctx.config.upstreamCallTimeoutMs;
  const [rate, dates] = await Promise.all([
    from === corridor.currency
      ? Promise.resolve({ kind: 'rate' as const, rate: '1' })
      : withDeadline(deadline, () => ctx.upstreams.rates.mid(call, from, corridor.currency)),
    withDeadline(deadline, () =>
      ctx.upstreams.remittance.conversionDates(call, { currency: corridor.currency, line: 'express' }),
    ),
  ]);
  if (rate.kind === 'timeout' || rate.kind === 'unknown')
    throw new ApiError('upstream_error', 'The rate service did not answer; retry with the same key.');
  return {
    midRate: rate.kind === 'rate' ? rate.rate : undefined,
    payoutDate: dates.kind === 'dates' ? dates.earliestValid : undefined,
  };
}

export async function createOrder(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCaller,
  input: OrderInput,
  market: Market,
) {
  const link = await findActivePayee(trx, caller, input.payee_id);
  if (!link) throw new ApiError('resource_not_found', 'No such payee for this member.');
  const corridor = await corridorById(trx, link.corridor_id);
  if (!corridor) throw new Error(`remittance: corridor ${link.corridor_id} of payee ${link.seq} missing`);
  const kycLevel = await memberKycLevel(trx, caller);
  // Both gates hold: the corridor's own level and the service-wide `remittance` requirement (GET /v1/kyc/requirements).
  const required = Math.max(corridor.minKycLevel, await minKycLevel(trx, caller.environment, 'remittance'));
  if (kycLevel < required) throw new ApiError('kyc_required');
  const contract = corridor.contracts[link.entity_type];
  const refusal =
    corridorRefusal(corridor.policy, contract) ??
    payeeRefusal(corridor.policy, contract!, link.fields, corridor.country);
  if (refusal) throw new ApiError('corridor_not_supported', `The corridor cannot serve this payee now (${refusal}).`);

  const asset = await getAsset(trx, input.source_asset.toUpperCase());
  if (!asset || !asset.enabled) throw new ApiError('asset_not_allowed');
  if (market.midRate === undefined)
    throw new ApiError('asset_not_allowed', `${asset.code} cannot be converted to ${corridor.currency}.`);
  const amount = parseAmount(input.source_amount, asset.scale, 'source_amount');
  if (amount <= 0n) throw new ApiError('invalid_request', 'source_amount must be greater than zero.');
  await requireHighValueLevel(trx, {
    environment: caller.environment,
    memberId: caller.memberId,
    asset: asset.code,
    amount,
  });
  const payoutScale = await scaleOf(trx, corridor.currency);
  const price = priceOrder({
    sourceAmount: amount,
    sourceScale: asset.scale,
    payoutScale,
    midRate: market.midRate,
    fxSpreadBps: asset.code === corridor.currency ? 0 : corridor.fxSpreadBps,
    feeBps: corridor.feeBps,
    feeFixedPayout: corridor.feeFixed,
  });
  if (price.payoutAmount <= 0n) throw new ApiError('amount_out_of_range', 'The amount converts to nothing.');

  // Daily limits on the merchant's clock: the day the order counts against is its own day.
  const now = await ctx.clock.now(trx, caller);
  const day = now.toISOString().slice(0, 10);
  await lockDailyTotals(trx, corridor.id, caller.memberId, caller.merchantId);
  const breach = limitBreach(
    price.payoutAmount,
    corridor.limits,
    await dailyTotals(trx, corridor.id, day, caller.memberId, caller.merchantId),
  );
  if (breach?.kind === 'amount_out_of_range')
    throw new ApiError('amount_out_of_range', "The payout is below the corridor's minimum.");
  if (breach)
    throw new ApiError('limit_exceeded', undefined, { limit_type: breach.limit_type, limit_scope: breach.limit_scope });

  const order = await insertOrder(trx, {
    id: newId('rmt'),
    ...ownerColumns(caller),
    payee_seq: link.seq,
    entity_id: link.entity_id,
    corridor_id: corridor.id,
    source_asset: asset.code,
    source_amount: amount.toString(),
    fee: price.fee.toString(),
    payout_currency: corridor.currency,
    payout_amount: price.payoutAmount.toString(),
    rate: price.rate,
    value_day: day,
    payout_date: market.payoutDate ?? null,
    ...pendingOrderColumns,
    completed_at: null,
    failed_at: null,
    returned_at: null,
    created_at: now,
    updated_at: now,
  });
  await postEntryOrRefuse(trx, {
    environment: caller.environment,
    merchantId: caller.merchantId,
    kind: remitEntryKinds.freeze,
    referenceType: remitReferenceType,
    referenceId: order.id,
    asset: asset.code,
    lines: remitFreezeLines({ memberId: caller.memberId, merchantId: caller.merchantId, amount, fee: price.fee }),
  });
  await emitOrderEvent(trx, order);
  await enqueue(trx, {
    kind: dispatchJobKind,
    payload: { order_id: order.id },
    dedupeKey: `${dispatchJobKind}:${order.id}`,
    maxAttempts: 20,
  });
  return orderView(await payeeIdsOf(trx), order, asset.scale, payoutScale);
}

export async function viewOf(db: Db, row: RemitOrderRow) {
  return orderView(
    await payeeIdsOf(db),
    row,
    await scaleOf(db, row.source_asset),
    await scaleOf(db, row.payout_currency),
  );
}

export async function getOrder(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such remittance.');
  return viewOf(db, row);
}

export async function listOrders(db: Db, caller: Caller, query: PageParams & { status?: PublicStatus }) {
  return viewPage(await keysetPage(ordersQuery(db, caller, query.status), query), (row) => viewOf(db, row));
}
