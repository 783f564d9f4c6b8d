/**
 * The gates and the price of a member exchange (docs/exchange.md): the rate call, the direction,
 * KYC and limit gates, and a fresh price with every gate in the reference's order. The quote and
 * the execution (service.ts) run them; merchant conversions (conversions.ts) share the rate and
 * the direction's pricing.
 */
import type { Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { minorFromDb, parseAmount } from '../../money/index.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { isStale, type RateOutcome } from '../../upstreams/rates/port.js';
import { getAsset, type Asset } from '../assets/index.js';
import { minKycLevel } from '../kyc/index.js';
import { dailyTotalsOf, findDirection, limitsOf, membersKyc, type Db } from './queries.js';
import { limitBreach, priceExchange, type Price } from './rules.js';
import type { DirectionRow } from './tables.js';
import type { MemberScope, MerchantScope } from '../../platform/caller.js';

/** A rate older than this (seconds, on the merchant's clock) is `rate unavailable`: `service_unavailable`. */
export const rateMaxAgeSeconds = 60;

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

export interface Priced {
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
export function usableDirection(
  sides: { from: string; to: string },
  assets: [Asset | undefined, Asset | undefined],
  direction: DirectionRow | undefined,
): { direction: DirectionRow; fromScale: number; toScale: number } {
  const [a, b] = assets;
  if (!a || !b) throw new ApiError('invalid_request', `Unknown asset ${!a ? sides.from : sides.to}.`);
  if (!a.enabled || !b.enabled)
    throw new ApiError('asset_not_allowed', `${!a.enabled ? sides.from : sides.to} is not enabled.`);
  if (!direction || !direction.enabled)
    throw new ApiError('service_unavailable', `Exchange from ${sides.from} to ${sides.to} is not available.`);
  return { direction, fromScale: a.scale, toScale: b.scale };
}

async function directionFor(db: Db, environment: Environment, from: string, to: string) {
  const assets: [Asset | undefined, Asset | undefined] = [await getAsset(db, from), await getAsset(db, to)];
  const listed = assets[0]?.enabled && assets[1]?.enabled;
  return usableDirection({ from, to }, assets, listed ? await findDirection(db, environment, from, to) : undefined);
}

/** The KYC gate's refusal, if any: the member must be active and at the direction's and the `exchange` business's
 * level. */
export function kycRefusal(
  member: { status: string; kyc_level: number } | undefined,
  direction: DirectionRow,
  businessLevel: number,
): ApiError | undefined {
  if (!member || member.status !== 'active') return new ApiError('member_not_found');
  if (member.kyc_level < Math.max(direction.min_kyc_level, businessLevel)) return new ApiError('kyc_required');
  return undefined;
}

/** The member is active and meets the direction's and the `exchange` business's KYC level. */
export async function kycGate(db: Db, scope: MemberScope, direction: DirectionRow): Promise<void> {
  const member = (await membersKyc(db, [scope.memberId])).get(scope.memberId);
  const businessLevel = member?.status === 'active' ? await minKycLevel(db, scope.environment, 'exchange') : 0;
  const refusal = kycRefusal(member, direction, businessLevel);
  if (refusal) throw refusal;
}

/** The limit gate's refusal, if any: the amount range, and the member's daily amount and count in the direction. */
export function limitRefusal(
  amount: bigint,
  direction: DirectionRow,
  totals: { amount: bigint; count: number },
): ApiError | undefined {
  const breach = limitBreach(amount, limitsOf(direction), totals);
  if (breach?.kind === 'amount_out_of_range') {
    return new ApiError(
      'amount_out_of_range',
      breach.which === 'below_minimum'
        ? "from_amount is below the direction's minimum."
        : "from_amount is above the direction's single maximum.",
    );
  }
  if (breach)
    return new ApiError('limit_exceeded', undefined, {
      limit_type: breach.limit_type,
      limit_scope: breach.limit_scope,
    });
  return undefined;
}

/** Amount range and the member's daily amount and count in the direction, on the merchant's day. */
export async function limitGate(
  db: Db,
  scope: MemberScope,
  direction: DirectionRow,
  amount: bigint,
  day: string,
): Promise<void> {
  const totals = await dailyTotalsOf(db, [{ directionId: direction.id, memberId: scope.memberId, day }]);
  const refusal = limitRefusal(amount, direction, totals(direction.id, scope.memberId, day));
  if (refusal) throw refusal;
}

/** The direction's spread and fee applied to an amount at the mid rate (`rules.ts#priceExchange`). */
export function priceAtDirection(
  direction: DirectionRow,
  amount: bigint,
  fromScale: number,
  toScale: number,
  mid: string,
): ReturnType<typeof priceExchange> {
  return priceExchange({
    fromAmount: amount,
    fromScale,
    toScale,
    midRate: mid,
    spreadBps: direction.spread_bps,
    feeSide: direction.fee_side,
    feeBps: direction.fee_bps,
    feeFixed: minorFromDb(direction.fee_fixed),
  });
}

export function priceOrRefuse(
  direction: DirectionRow,
  amount: bigint,
  fromScale: number,
  toScale: number,
  mid: string,
): Price {
  const price = priceAtDirection(direction, amount, fromScale, toScale, mid);
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
export async function priceFresh(
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
