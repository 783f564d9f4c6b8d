/**
 * Member exchange (docs/exchange.md): `POST /v1/exchange/quotes` (read-only, or a lock: an order
 * in state `quoted`), `POST /v1/exchange/orders` (executes a lock at its numbers, or at market).
 * Every gate (pricing.ts) runs at quote and again at execution; a lock fixes the price only. The
 * reads and the void of unused locks: reads.ts.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  exchangeBuyLines,
  exchangeSellLines,
  minorFromDb,
  postEntryOrRefuse,
  rowReference,
  type EntryInput,
  exchangeEntryKinds,
} from '../../money/index.js';
import { recordEvent, rowEnvelope } from '../../events/index.js';
import type { RateOutcome } from '../../upstreams/rates/port.js';
import { getAsset } from '../assets/index.js';
import { requireStepUp, type StepUpCall, stepUpErrors, stepUpObjectRef } from '../step-up/index.js';
import { externalMemberIdOf } from '../members/index.js';
import {
  directionById,
  findOrder,
  completeQuoted,
  insertOrder,
  lockMemberDirections,
  stepUpThresholdOf,
} from './queries.js';
import { exchangeReferenceType, needsStepUp } from './rules.js';
import type { DirectionRow, ExchangeOrderRow } from './tables.js';
import { checkRestatement, sidesOf, type QuoteRestatement } from './requests.js';
import { kycGate, limitGate, priceFresh } from './pricing.js';
import { orderView, quoteView } from './views.js';
import type { MemberScope } from '../../platform/caller.js';

export const exchangeErrors = {
  quote: [
    'invalid_request',
    'invalid_fields',
    'asset_not_allowed',
    'service_unavailable',
    'kyc_required',
    'amount_out_of_range',
    'limit_exceeded',
  ],
  execute: [
    'invalid_request',
    'resource_not_found',
    'state_invalid',
    'asset_not_allowed',
    'service_unavailable',
    'kyc_required',
    'amount_out_of_range',
    'limit_exceeded',
    'insufficient_balance',
    ...stepUpErrors,
  ],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export interface QuoteBody {
  from_asset: string;
  to_asset: string;
  from_amount: string;
  lock?: unknown;
}

/** The order's event at its status (`exchange.order.<status>`), in the write's transaction. */
export async function emitOrderEvent(trx: Transaction<Database>, row: ExchangeOrderRow): Promise<void> {
  await recordEvent(trx, {
    ...rowEnvelope(row),
    type: `exchange.order.${row.status}`,
    object: 'exchange_order',
    status: row.status,
    externalMemberId: await externalMemberIdOf(trx, row.member_id),
  });
}

// ---------------------------------------------------------------------------------------------
// Quotes

/** A read-only quote: nothing is stored, `quote_id` is absent. */
export async function readOnlyQuote(ctx: ServiceContext, scope: MemberScope, body: QuoteBody, rate: RateOutcome) {
  const sides = sidesOf(body);
  return quoteView(await priceFresh(ctx, ctx.db, scope, sides, body.from_amount, rate), sides);
}

/** A locked quote: an exchange order in state `quoted` until `quote_expires_at`; no money moves. */
export async function lockedQuote(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  scope: MemberScope,
  body: QuoteBody,
  rate: RateOutcome,
) {
  const sides = sidesOf(body);
  const p = await priceFresh(ctx, trx, scope, sides, body.from_amount, rate);
  const expiresAt = new Date(p.now.getTime() + p.direction.quote_lock_seconds * 1000);
  const row = await insertOrder(trx, {
    id: newId('exc'),
    ...ownerColumns(scope),
    direction_id: p.direction.id,
    kind: 'locked',
    status: 'quoted',
    status_version: 1,
    from_asset: sides.from,
    to_asset: sides.to,
    from_amount: p.amount.toString(),
    to_amount: p.price.toAmount.toString(),
    fee_amount: p.price.fee.toString(),
    fee_asset: p.price.feeSide === 'from' ? sides.from : sides.to,
    rate: p.price.rate,
    mid_rate: p.mid,
    quote_expires_at: expiresAt,
    value_day: null,
    created_at: p.now,
    executed_at: null,
    expired_at: null,
    updated_at: p.now,
  });
  await emitOrderEvent(trx, row);
  return quoteView(p, sides, { id: row.id, expiresAt });
}

// ---------------------------------------------------------------------------------------------
// Execution

export interface ExecuteCall {
  scope: MemberScope;
  stepUp: StepUpCall;
}

/** The gates a lock does not fix, again at execution: direction, KYC, limits (under the member's lock), step-up. */
async function executionGates(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  call: ExecuteCall,
  direction: DirectionRow,
  amount: bigint,
  day: string,
  objectRef: string,
) {
  await kycGate(trx, call.scope, direction);
  await lockMemberDirections(trx, [{ directionId: direction.id, memberId: call.scope.memberId }]);
  await limitGate(trx, call.scope, direction, amount, day);
  if (needsStepUp(amount, stepUpThresholdOf(direction))) {
    await requireStepUp(ctx, trx, { principal: call.scope, action: 'exchange.execute', objectRef, call: call.stepUp });
  }
}

async function post(trx: Transaction<Database>, row: ExchangeOrderRow): Promise<void> {
  const money = {
    memberId: row.member_id,
    merchantId: row.merchant_id,
    fromAmount: minorFromDb(row.from_amount),
    toAmount: minorFromDb(row.to_amount),
    fee: minorFromDb(row.fee_amount),
    feeSide: row.fee_asset === row.from_asset ? ('from' as const) : ('to' as const),
  };
  await postSellThenBuy(
    trx,
    rowReference(row, exchangeReferenceType),
    { kind: exchangeEntryKinds.sell, asset: row.from_asset, lines: exchangeSellLines(money) },
    { kind: exchangeEntryKinds.buy, asset: row.to_asset, lines: exchangeBuyLines(money) },
  );
}

type EntrySide = Pick<EntryInput, 'kind' | 'asset' | 'lines'>;

/**
 * The two entries of a member exchange or a merchant conversion, in a fixed order: the from-asset's
 * sell first (its shortfall is the refusal: the member's `insufficient_balance`, the merchant's
 * `merchant_insufficient_funds`), then the to-asset's buy.
 */
export async function postSellThenBuy(
  trx: Transaction<Database>,
  base: Omit<EntryInput, keyof EntrySide>,
  sell: EntrySide,
  buy: EntrySide,
): Promise<void> {
  await postEntryOrRefuse(trx, { ...base, ...sell });
  await postEntryOrRefuse(trx, { ...base, ...buy });
}

/**
 * Executes a locked quote at its numbers: the order row is locked first, so parallel executions
 * of one quote run one after the other and only the first finds it `quoted`; after
 * `quote_expires_at` (the merchant's clock) it is refused and never re-priced.
 */
export async function executeLocked(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  call: ExecuteCall,
  quoteId: string,
  restated: QuoteRestatement = {},
) {
  const quoted = await findOrder(trx, quoteId, call.scope, true);
  if (!quoted) throw new ApiError('resource_not_found', 'No such quote for this member.');
  if (Object.keys(restated).length > 0) {
    const fromAsset = await getAsset(trx, quoted.from_asset);
    checkRestatement(
      restated,
      { from_asset: quoted.from_asset, to_asset: quoted.to_asset, from_amount: minorFromDb(quoted.from_amount) },
      fromAsset?.scale ?? 0,
    );
  }
  if (quoted.status !== 'quoted')
    throw new ApiError(
      'state_invalid',
      quoted.status === 'completed' ? 'The quote was already executed.' : 'The quote has expired.',
    );
  const now = await ctx.clock.now(trx, call.scope);
  if (quoted.quote_expires_at && now.getTime() >= new Date(quoted.quote_expires_at).getTime())
    throw new ApiError('state_invalid', 'The quote has expired.');
  const direction = await directionById(trx, quoted.direction_id);
  if (!direction || !direction.enabled)
    throw new ApiError('service_unavailable', 'This exchange direction is not available now.');
  const [a, b] = [await getAsset(trx, quoted.from_asset), await getAsset(trx, quoted.to_asset)];
  if (!a?.enabled || !b?.enabled) throw new ApiError('asset_not_allowed');
  const day = now.toISOString().slice(0, 10);
  const amount = minorFromDb(quoted.from_amount);
  await executionGates(
    ctx,
    trx,
    call,
    direction,
    amount,
    day,
    stepUpObjectRef('exchange.execute', { order: quoted.id }),
  );
  const row = await completeQuoted(trx, quoted.id, now, day);
  if (!row) throw new ApiError('state_invalid', 'The quote is no longer open.');
  await post(trx, row);
  await emitOrderEvent(trx, row);
  return orderView(row, a.scale, b.scale);
}
