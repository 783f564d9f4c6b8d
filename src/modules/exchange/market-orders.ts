/**
 * The execution of exchange orders (`POST /v1/exchange/orders`) as a batch effect (group commit,
 * docs/write-model.md): market orders of any merchants in a handful of statements whatever their
 * number, every gate of the reference in its order for each one (pricing.ts). A locked quote's
 * execution, a member's second order in one call and an order that needs step-up are written
 * alone (`writeAlone`): the first locks its quote before anything, the second depends on the
 * first's outcome (its balance, its day's totals), the third consumes a challenge before its
 * posting may refuse it.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ownerColumns } from '../../db/owned-by.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { writeAlone, type WriteMode } from '../../platform/writes/write-batch.js';
import {
  checkEach,
  headOfCall,
  keepPassing,
  postedOnly,
  type BatchAnswer,
  type BatchItem,
} from '../../platform/writes/batch-answers.js';
import {
  exchangeBuyLines,
  exchangeEntryKinds,
  exchangeSellLines,
  parseAmount,
  postEntries,
  rowReference,
  type EntryInput,
} from '../../money/index.js';
import type { RateOutcome } from '../../upstreams/rates/port.js';
import { getAsset } from '../assets/index.js';
import { minKycLevel } from '../kyc/index.js';
import { stepUpInBatch, stepUpObjectRef } from '../step-up/index.js';
import {
  dailyTotalsOf,
  directionKey,
  directionsOf,
  insertOrders,
  lockMemberDirections,
  membersKyc,
  stepUpThresholdOf,
} from './queries.js';
import { exchangeReferenceType, needsStepUp, type Price } from './rules.js';
import type { DirectionRow, ExchangeOrderRow } from './tables.js';
import type { ExecuteRequest } from './requests.js';
import { kycRefusal, limitRefusal, priceOrRefuse, usableDirection, usableMid } from './pricing.js';
import { orderView } from './views.js';
import { executeLocked, type ExecuteCall } from './service.js';

/** An execution to write: who asks, what (a locked quote or a market order), and a market order's rate. */
export interface ExecutePlan {
  call: ExecuteCall;
  request: ExecuteRequest;
  rate?: RateOutcome;
}

type MarketRequest = Extract<ExecuteRequest, { kind: 'market' }>;
type OrderView = ReturnType<typeof orderView>;
type Answer = BatchAnswer<OrderView>;

/** A market order that passed the gates read so far. */
interface Pending extends BatchItem {
  call: ExecuteCall;
  request: MarketRequest;
  rate: RateOutcome | undefined;
  direction: DirectionRow;
  fromScale: number;
  toScale: number;
  amount: bigint;
  price?: Price;
  mid?: string;
  now?: Date;
  day?: string;
  externalMemberId?: string;
}

/**
 * Executes the plans in order; one answer each (its view or its refusal, with nothing of it
 * written), up to the first that must be written alone (a locked quote's: `executeLocked`).
 */
export async function executeOrders(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  plans: readonly ExecutePlan[],
  mode: WriteMode,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  if (mode.alone && plans[0]?.request.kind === 'locked') {
    try {
      const { call, request } = plans[0];
      return [await executeLocked(ctx, trx, call, request.quoteId, request.restated)];
    } catch (err) {
      return [err as Error];
    }
  }
  const call = headOfCall(plans, answers, ({ call, request }) =>
    request.kind === 'locked' ? null : [call.scope.memberId],
  );
  const markets = call.head;
  let end = call.end;

  let pending = await directionGates(trx, markets, answers);
  pending = await kycGates(trx, pending, answers);
  const nows = await ctx.clock.nowOfEach(
    trx,
    pending.map((p) => p.call.scope),
  );
  pending = keepPassing(pending, answers, (p, k) => {
    const now = nows[k]!;
    const mid = usableMid(p.rate!, now);
    Object.assign(p, { now, mid, day: now.toISOString().slice(0, 10) });
    p.price = priceOrRefuse(p.direction, p.amount, p.fromScale, p.toScale, mid);
  });
  await lockMemberDirections(
    trx,
    pending.map((p) => ({ directionId: p.direction.id, memberId: p.call.scope.memberId })),
  );
  const totals = await dailyTotalsOf(
    trx,
    pending.map((p) => ({ directionId: p.direction.id, memberId: p.call.scope.memberId, day: p.day! })),
  );
  pending = keepPassing(pending, answers, (p) => {
    const refusal = limitRefusal(p.amount, p.direction, totals(p.direction.id, p.call.scope.memberId, p.day!));
    if (refusal) throw refusal;
  });

  const accepted: Pending[] = [];
  for (const p of pending) {
    if (p.i >= end) break;
    if (!needsStepUp(p.amount, stepUpThresholdOf(p.direction))) {
      accepted.push(p);
      continue;
    }
    const gate = await stepUpInBatch(ctx, trx, mode, {
      principal: p.call.scope,
      action: 'exchange.execute',
      objectRef: stepUpObjectRef('exchange.execute', { from: p.request.from, to: p.request.to, amount: p.amount }),
      call: p.call.stepUp,
    });
    if (gate === 'passed') accepted.push(p);
    else answers[p.i] = gate;
    if (gate === writeAlone) end = p.i + 1;
  }
  for (const [k, row] of (await writeOrders(trx, accepted, answers)).entries())
    if (row) answers[accepted[k]!.i] = orderView(row, accepted[k]!.fromScale, accepted[k]!.toScale);
  return answers.slice(0, end);
}

/** The assets and direction of each order (one statement for the directions), then its amount. */
async function directionGates(
  trx: Transaction<Database>,
  markets: readonly ExecutePlan[],
  answers: Answer[],
): Promise<Pending[]> {
  const sides = markets.map(({ call, request }) => {
    const { from, to } = request as MarketRequest;
    return { environment: call.scope.environment, from, to };
  });
  const directions = await directionsOf(trx, sides);
  return checkEach(markets, answers, async ({ call, request, rate }): Promise<Omit<Pending, 'i'>> => {
    const market = request as MarketRequest;
    const assets = [await getAsset(trx, market.from), await getAsset(trx, market.to)] as const;
    const found = directions.get(directionKey(call.scope.environment, market.from, market.to));
    const usable = usableDirection(market, [assets[0], assets[1]], found);
    const amount = parseAmount(market.amount, usable.fromScale, 'from_amount');
    if (amount <= 0n) throw new ApiError('invalid_request', 'from_amount must be greater than zero.');
    return { call, request: market, rate, ...usable, amount };
  });
}

/** Each member active and at the KYC level its direction and the `exchange` business need (one statement for the
 * members, one for each environment's business level). */
async function kycGates(trx: Transaction<Database>, pending: Pending[], answers: Answer[]): Promise<Pending[]> {
  const members = await membersKyc(
    trx,
    pending.map((p) => p.call.scope.memberId),
  );
  const levels = new Map<string, number>();
  for (const environment of new Set(pending.map((p) => p.call.scope.environment)))
    levels.set(environment, await minKycLevel(trx, environment, 'exchange'));
  return keepPassing(pending, answers, (p) => {
    const member = members.get(p.call.scope.memberId);
    const refusal = kycRefusal(member, p.direction, levels.get(p.call.scope.environment)!);
    if (refusal) throw refusal;
    p.externalMemberId = member!.external_member_id;
  });
}

/**
 * The accepted orders' money and rows: every sell and every buy in one posting statement (a
 * shortfall refuses its order alone; a buy requires its sell, so a refused sell writes no buy; a
 * buy only adds: a refusal there fails the batch), the rows of those that posted in one. Each
 * order's row, or undefined.
 */
async function writeOrders(
  trx: Transaction<Database>,
  accepted: readonly Pending[],
  answers: Answer[],
): Promise<(ExchangeOrderRow | undefined)[]> {
  const rows = accepted.map((p) => ({
    id: newId('exc'),
    ...ownerColumns(p.call.scope),
    direction_id: p.direction.id,
    kind: 'market' as const,
    status: 'completed' as const,
    status_version: 1,
    from_asset: p.request.from,
    to_asset: p.request.to,
    from_amount: p.amount.toString(),
    to_amount: p.price!.toAmount.toString(),
    fee_amount: p.price!.fee.toString(),
    fee_asset: p.price!.feeSide === 'from' ? p.request.from : p.request.to,
    rate: p.price!.rate,
    mid_rate: p.mid!,
    quote_expires_at: null,
    value_day: p.day!,
    created_at: p.now!,
    executed_at: p.now!,
    expired_at: null,
    updated_at: p.now!,
  }));
  const entry = (p: Pending, k: number, side: 'sell' | 'buy'): EntryInput => {
    const money = {
      memberId: p.call.scope.memberId,
      merchantId: p.call.scope.merchantId,
      fromAmount: p.amount,
      toAmount: p.price!.toAmount,
      fee: p.price!.fee,
      feeSide: p.price!.feeSide,
    };
    const base = rowReference(rows[k]!, exchangeReferenceType);
    return side === 'sell'
      ? { ...base, kind: exchangeEntryKinds.sell, asset: p.request.from, lines: exchangeSellLines(money) }
      : { ...base, kind: exchangeEntryKinds.buy, asset: p.request.to, lines: exchangeBuyLines(money) };
  };
  // Every sell first, then the buys, each requiring its sell (a refused sell writes no buy): one call.
  const outcomes = await postEntries(trx, [
    ...accepted.map((p, k) => ({ entry: entry(p, k, 'sell') })),
    ...accepted.map((p, k) => ({
      entry: entry(p, k, 'buy'),
      requires: k,
      event: {
        merchantId: rows[k]!.merchant_id,
        environment: rows[k]!.environment,
        type: 'exchange.order.completed' as const,
        object: 'exchange_order',
        objectId: rows[k]!.id,
        externalMemberId: p.externalMemberId!,
        status: 'completed',
        statusVersion: 1,
      },
    })),
  ]);
  const sold = postedOnly(accepted, outcomes.slice(0, accepted.length), answers).map(({ k }) => k);
  for (const k of sold) {
    const bought = outcomes[accepted.length + k];
    if (bought instanceof Error) throw new Error('exchange: a buy was refused in a batch', { cause: bought });
  }
  const inserted = await insertOrders(
    trx,
    sold.map((k) => rows[k]!),
  );
  const byIndex = new Map(sold.map((k, n) => [k, inserted[n]!]));
  return accepted.map((_, k) => byIndex.get(k));
}
