/**
 * Remittance orders' pure rules: the order's price (fee on top, FX through the one rate service's
 * helpers), its limits, and the entries' reference type (docs/remittance.md; the entry kinds and
 * lines: src/money/posting-rules/remittance.ts). Whether a corridor can serve a
 * payee: corridors/rules.ts. No database, no clock: callers pass what these need.
 */
import { convert, convertBack, rateAfterSpread } from '../../../money/index.js';
import type { CorridorLimits } from '../corridors/rules.js';

// ---------------------------------------------------------------------------------------------
// Price: fee on top, FX through the rate service

export interface PriceInput {
  sourceAmount: bigint;
  sourceScale: number;
  payoutScale: number;
  /** Mid-market units of payout currency per source unit ('1' when they are the same). */
  midRate: string;
  /** Charged by lowering the rate; 0 when no conversion happens. */
  fxSpreadBps: number;
  feeBps: number;
  /** Fixed part of the fee, in minor units of the payout currency. */
  feeFixedPayout: bigint;
}

export interface Price {
  /** The rate applied: mid less the spread, rounded down to 10 places. */
  rate: string;
  payoutAmount: bigint;
  /** In the source asset, charged on top of the source amount. */
  fee: bigint;
}

/**
 * Payout = source × rate rounded down; fee = source × fee_bps rounded up, plus the fixed part
 * converted back into the source asset rounded up. Every rounding is in the service's favour.
 */
export function priceOrder(p: PriceInput): Price {
  const rate = rateAfterSpread(p.midRate, p.fxSpreadBps);
  const payoutAmount = convert(p.sourceAmount, p.sourceScale, p.payoutScale, rate, 'down');
  const percent = (p.sourceAmount * BigInt(p.feeBps) + 9_999n) / 10_000n;
  const fixed = p.feeFixedPayout === 0n ? 0n : convertBack(p.feeFixedPayout, p.sourceScale, p.payoutScale, rate, 'up');
  return { rate, payoutAmount, fee: percent + fixed };
}

// ---------------------------------------------------------------------------------------------
// Limits (payout currency, minor units; null = none)

export type LimitBreach =
  | { kind: 'amount_out_of_range' }
  | { kind: 'limit_exceeded'; limit_type: 'single' | 'daily'; limit_scope: 'member' | 'merchant' };

/**
 * Checks one order's payout against the corridor: below the minimum is `amount_out_of_range`;
 * then the single limits (member, merchant), then the daily ones with what the day already holds.
 */
export function limitBreach(
  payout: bigint,
  limits: CorridorLimits,
  today: { member: bigint; merchant: bigint },
): LimitBreach | undefined {
  if (payout < limits.payoutMin) return { kind: 'amount_out_of_range' };
  if (limits.memberSingleMax !== null && payout > limits.memberSingleMax)
    return { kind: 'limit_exceeded', limit_type: 'single', limit_scope: 'member' };
  if (limits.merchantSingleMax !== null && payout > limits.merchantSingleMax)
    return { kind: 'limit_exceeded', limit_type: 'single', limit_scope: 'merchant' };
  if (limits.memberDailyMax !== null && today.member + payout > limits.memberDailyMax)
    return { kind: 'limit_exceeded', limit_type: 'daily', limit_scope: 'member' };
  if (limits.merchantDailyMax !== null && today.merchant + payout > limits.merchantDailyMax)
    return { kind: 'limit_exceeded', limit_type: 'daily', limit_scope: 'merchant' };
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Entry kinds (one asset per entry: the source asset; with the order id each kind posts once); their
// lines are src/money/posting-rules/remittance.ts

export const remitReferenceType = 'remittance_order';
