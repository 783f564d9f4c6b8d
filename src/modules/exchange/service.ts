// Over 300 lines: a quote and its order share pricing, gates and events; a split would pass them all around.
/**
 * Member exchange (docs/exchange.md): `POST /v1/exchange/quotes` (read-only, or a lock: an order
 * in state `quoted`), `POST /v1/exchange/orders` (executes a lock at its numbers, or at market),
 * the reads, and the void of unused locks (`expired`, by a timed process: no money moves).
 * Every gate runs at quote and again at execution; a lock fixes the price only.
 */
import type { Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { type ListEnvelope, type PageParams } from '../../platform/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import {
  exchangeBuyLines,
  exchangeSellLines,
  formatAmount,
  minorFromDb,
  parseAmount,
  postEntryOrRefuse,
} from '../../money/index.js';
import { recordEvent } from '../../events/index.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { isStale, type RateOutcome } from '../../upstreams/rates/port.js';
import { getAsset } from '../assets/index.js';
import { minKycLevel } from '../kyc/index.js';
import { requireStepUp, type StepUpCall, stepUpErrors, stepUpObjectRef } from '../step-up/index.js';
import {
  dailyTotals,
  directionById,
  expireQuotes,
  externalIdOf,
  findDirection,
  findOrder,
  limitsOf,
  completeQuoted,
  insertOrder,
  lockMemberDirection,
  memberKyc,
  ordersQuery,
  scaleOf,
  stepUpThresholdOf,
  type Db,
} from './queries.js';
import {
  exchangeEntryKinds,
  exchangeReferenceType,
  limitBreach,
  needsStepUp,
  priceExchange,
  type Price,
} from './rules.js';
import type { DirectionRow, ExchangeOrderRow, OrderStatus } from './tables.js';
import { checkRestatement, sidesOf, type ExecuteRequest, type QuoteRestatement } from './requests.js';
import { isoOrNull } from '../../platform/dates.js';
import type { Caller, MemberScope, MerchantScope } from '../../platform/caller.js';

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

/** A rate older than this (seconds, on the merchant's clock) is `rate unavailable`: `service_unavailable`. */
export const rateMaxAgeSeconds = 60;

export interface QuoteBody {
  from_asset: string;
  to_asset: string;
  from_amount: string;
  lock?: unknown;
}

/** The read-only rate call, made outside any transaction (a provider is never called inside one). */
export async function askRate(
  ctx: ServiceContext,
  scope: MerchantScope,
  from: string,
  to: string,
): Promise<RateOutcome> {
  return withDeadline(ctx.config.upstreamCallTimeoutMs, () => ctx.upstreams.rates.mid(scope, from, to));
}

/** The mid rate to deal on, or `service_unavailable` (no market, stale, no answer). */
export function usableMid(rate: RateOutcome, now: Date): string {
  if (rate.kind !== 'rate') throw new ApiError('service_unavailable', 'The rate is unavailable; try again later.');
  if (isStale(rate.asOf, now, rateMaxAgeSeconds))
    throw new ApiError('service_unavailable', 'The rate is unavailable (stale); try again later.');
  return rate.rate;
}

interface Priced {
  direction: DirectionRow;
  fromScale: number;
  toScale: number;
  amount: bigint;
  price: Price;
  mid: string;
  now: Date;
  day: string;
}

/** Direction gates: both assets listed and enabled, the direction present and enabled. */
async function directionFor(
  db: Db,
  environment: Environment,
  from: string,
  to: string,
): Promise<{ direction: DirectionRow; fromScale: number; toScale: number }> {
  const [a, b] = [await getAsset(db, from), await getAsset(db, to)];
  if (!a || !b) throw new ApiError('invalid_request', `Unknown asset ${!a ? from : to}.`);
  if (!a.enabled || !b.enabled) throw new ApiError('asset_not_allowed', `${!a.enabled ? from : to} is not enabled.`);
  const direction = await findDirection(db, environment, from, to);
  if (!direction || !direction.enabled)
    throw new ApiError('service_unavailable', `Exchange from ${from} to ${to} is not available.`);
  return { direction, fromScale: a.scale, toScale: b.scale };
}

/** The member is active and meets the direction's and the `exchange` business's KYC level. */
async function kycGate(db: Db, scope: MemberScope, direction: DirectionRow): Promise<void> {
  const member = await memberKyc(db, scope.memberId);
  if (!member || member.status !== 'active') throw new ApiError('member_not_found');
  const needed = Math.max(direction.min_kyc_level, await minKycLevel(db, scope.environment, 'exchange'));
  if (member.kyc_level < needed) throw new ApiError('kyc_required');
}

/** Amount range and the member's daily amount and count in the direction, on the merchant's day. */
async function limitGate(
  db: Db,
  scope: MemberScope,
  direction: DirectionRow,
  amount: bigint,
  day: string,
): Promise<void> {
  const breach = limitBreach(amount, limitsOf(direction), await dailyTotals(db, direction.id, scope.memberId, day));
  if (breach?.kind === 'amount_out_of_range') {
    throw new ApiError(
      'amount_out_of_range',
      breach.which === 'below_minimum'
        ? "from_amount is below the direction's minimum."
        : "from_amount is above the direction's single maximum.",
    );
  }
  if (breach)
    throw new ApiError('limit_exceeded', undefined, { limit_type: breach.limit_type, limit_scope: breach.limit_scope });
}

function priceOrRefuse(
  direction: DirectionRow,
  amount: bigint,
  fromScale: number,
  toScale: number,
  mid: string,
): Price {
  const price = priceExchange({
    fromAmount: amount,
    fromScale,
    toScale,
    midRate: mid,
    spreadBps: direction.spread_bps,
    feeSide: direction.fee_side,
    feeBps: direction.fee_bps,
    feeFixed: minorFromDb(direction.fee_fixed),
  });
  if ('refusal' in price) {
    throw new ApiError(
      'amount_out_of_range',
      price.refusal === 'fee_consumes_principal'
        ? 'The fee would consume the amount.'
        : 'The amount converts to nothing.',
    );
  }
  return price;
}

/** Every gate of a new price (quote or market order), in the reference's order. */
async function priceFresh(
  ctx: ServiceContext,
  db: Db,
  scope: MemberScope,
  sides: { from: string; to: string },
  amountText: string,
  rate: RateOutcome,
): Promise<Priced> {
  const { direction, fromScale, toScale } = await directionFor(db, scope.environment, sides.from, sides.to);
  const amount = parseAmount(amountText, fromScale, 'from_amount');
  if (amount <= 0n) throw new ApiError('invalid_request', 'from_amount must be greater than zero.');
  await kycGate(db, scope, direction);
  const now = await ctx.clock.now(db, scope);
  const mid = usableMid(rate, now);
  const price = priceOrRefuse(direction, amount, fromScale, toScale, mid);
  const day = now.toISOString().slice(0, 10);
  await limitGate(db, scope, direction, amount, day);
  return { direction, fromScale, toScale, amount, price, mid, now, day };
}

// ---------------------------------------------------------------------------------------------
// Views

export function orderView(row: ExchangeOrderRow, fromScale: number, toScale: number) {
  const feeScale = row.fee_asset === row.from_asset ? fromScale : toScale;
  return {
    id: row.id,
    type: row.kind,
    status: row.status,
    status_version: row.status_version,
    from_asset: row.from_asset,
    to_asset: row.to_asset,
    from_amount: formatAmount(minorFromDb(row.from_amount), fromScale),
    to_amount: formatAmount(minorFromDb(row.to_amount), toScale),
    rate: row.rate,
    fee_amount: formatAmount(minorFromDb(row.fee_amount), feeScale),
    fee_asset: row.fee_asset,
    ledger_scale_from: fromScale,
    ledger_scale_to: toScale,
    quote_expires_at: isoOrNull(row.quote_expires_at),
    executed_at: isoOrNull(row.executed_at),
    expired_at: isoOrNull(row.expired_at),
    created_at: isoOrNull(row.created_at)!,
  };
}

export async function viewOf(db: Db, row: ExchangeOrderRow) {
  return orderView(row, await scaleOf(db, row.from_asset), await scaleOf(db, row.to_asset));
}

function quoteView(p: Priced, sides: { from: string; to: string }, lock?: { id: string; expiresAt: Date }) {
  const feeAsset = p.price.feeSide === 'from' ? sides.from : sides.to;
  return {
    from_asset: sides.from,
    to_asset: sides.to,
    from_amount: formatAmount(p.amount, p.fromScale),
    to_amount: formatAmount(p.price.toAmount, p.toScale),
    rate: p.price.rate,
    fee_amount: formatAmount(p.price.fee, p.price.feeSide === 'from' ? p.fromScale : p.toScale),
    fee_asset: feeAsset,
    ...(lock ? { quote_id: lock.id, quote_expires_at: lock.expiresAt.toISOString() } : {}),
    quote_ttl_sec: p.direction.quote_lock_seconds,
    ledger_scale_from: p.fromScale,
    ledger_scale_to: p.toScale,
  };
}

async function emitOrderEvent(trx: Transaction<Database>, row: ExchangeOrderRow): Promise<void> {
  await recordEvent(trx, {
    merchantId: row.merchant_id,
    environment: row.environment,
    type: `exchange.order.${row.status}`,
    object: 'exchange_order',
    objectId: row.id,
    externalMemberId: await externalIdOf(trx, row.member_id),
    status: row.status,
    statusVersion: row.status_version,
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
    merchant_id: scope.merchantId,
    environment: scope.environment,
    member_id: scope.memberId,
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

interface ExecuteCall {
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
  await lockMemberDirection(trx, direction.id, call.scope.memberId);
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
  const base = {
    environment: row.environment,
    merchantId: row.merchant_id,
    referenceType: exchangeReferenceType,
    referenceId: row.id,
  };
  // Fixed order: the from-asset first (its shortfall is the member's `insufficient_balance`).
  await postEntryOrRefuse(trx, {
    ...base,
    kind: exchangeEntryKinds.sell,
    asset: row.from_asset,
    lines: exchangeSellLines(money),
  });
  await postEntryOrRefuse(trx, {
    ...base,
    kind: exchangeEntryKinds.buy,
    asset: row.to_asset,
    lines: exchangeBuyLines(money),
  });
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

/** A market order: priced now (every gate), executed at once; it is born `completed`. */
export async function executeMarket(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  call: ExecuteCall,
  req: Extract<ExecuteRequest, { kind: 'market' }>,
  rate: RateOutcome,
) {
  const sides = { from: req.from, to: req.to };
  const p = await priceFresh(ctx, trx, call.scope, sides, req.amount, rate);
  await executionGates(
    ctx,
    trx,
    call,
    p.direction,
    p.amount,
    p.day,
    stepUpObjectRef('exchange.execute', { from: req.from, to: req.to, amount: p.amount }),
  );
  const row = await insertOrder(trx, {
    id: newId('exc'),
    merchant_id: call.scope.merchantId,
    environment: call.scope.environment,
    member_id: call.scope.memberId,
    direction_id: p.direction.id,
    kind: 'market',
    status: 'completed',
    status_version: 1,
    from_asset: req.from,
    to_asset: req.to,
    from_amount: p.amount.toString(),
    to_amount: p.price.toAmount.toString(),
    fee_amount: p.price.fee.toString(),
    fee_asset: p.price.feeSide === 'from' ? req.from : req.to,
    rate: p.price.rate,
    mid_rate: p.mid,
    quote_expires_at: null,
    value_day: p.day,
    created_at: p.now,
    executed_at: p.now,
    expired_at: null,
    updated_at: p.now,
  });
  await post(trx, row);
  await emitOrderEvent(trx, row);
  return orderView(row, p.fromScale, p.toScale);
}

// ---------------------------------------------------------------------------------------------
// Reads and expiry

/**
 * Locks whose window has ended, on the merchant's clock, become `expired` before a read answers
 * them: the ticker voids them within its interval, but a read must not show `quoted` for a lock
 * that can no longer be executed. The same claim as the ticker's (`expireQuotes`, SKIP LOCKED),
 * with the same event; run only when a row read is such a lock.
 */
async function expireDueBeforeRead(
  ctx: ServiceContext,
  caller: Caller,
  rows: readonly ExchangeOrderRow[],
): Promise<boolean> {
  const locks = rows.filter((r) => r.status === 'quoted' && r.quote_expires_at !== null);
  if (locks.length === 0) return false;
  const scope = { merchantId: caller.merchantId, environment: caller.environment };
  const now = await ctx.clock.now(ctx.db, scope);
  if (!locks.some((r) => now.getTime() >= new Date(r.quote_expires_at!).getTime())) return false;
  await expireLocks(ctx, { scope, now });
  return true;
}

/** Locks voided in one transaction at most. */
export const expiryBatchMax = 500;

/**
 * Voids up to `expiryBatchMax` locks past their end in one transaction, each with its
 * `exchange.order.expired` event, and answers how many: of one merchant at `now` on its clock
 * (the timed process, a read), or of every merchant on its own clock (the ticker).
 */
export async function expireLocks(ctx: ServiceContext, at?: { scope: MerchantScope; now: Date }): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    const rows = await expireQuotes(trx, expiryBatchMax, at?.scope, at?.now);
    await emitExpired(trx, rows);
    return rows.length;
  });
}

async function getOrder(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such exchange order.');
  return viewOf(db, row);
}

async function listOrders(db: Db, caller: Caller, query: PageParams & { status?: OrderStatus }) {
  return viewsOf(db, await keysetPage(ordersQuery(db, caller, query.status), query));
}

async function viewsOf(db: Db, page: ListEnvelope<ExchangeOrderRow>) {
  const data = [];
  for (const row of page.data) data.push(await viewOf(db, row));
  return { ...page, data };
}

/** `getOrder` for the API: a lock whose window has ended is voided before it is answered (`expireDueBeforeRead`). */
export async function readOrder(ctx: ServiceContext, caller: Caller, id: string) {
  const row = await findOrder(ctx.db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such exchange order.');
  if (await expireDueBeforeRead(ctx, caller, [row])) return getOrder(ctx.db, caller, id);
  return viewOf(ctx.db, row);
}

/** `listOrders` for the API: the page is read again when a lock on it was voided first. */
export async function readOrders(ctx: ServiceContext, caller: Caller, query: PageParams & { status?: OrderStatus }) {
  const page = await keysetPage(ordersQuery(ctx.db, caller, query.status), query);
  if (await expireDueBeforeRead(ctx, caller, page.data)) return listOrders(ctx.db, caller, query);
  return viewsOf(ctx.db, page);
}

/** Voided locks get their `exchange.order.expired` event in the same transaction. */
async function emitExpired(trx: Transaction<Database>, rows: ExchangeOrderRow[]): Promise<void> {
  for (const row of rows) await emitOrderEvent(trx, row);
}
