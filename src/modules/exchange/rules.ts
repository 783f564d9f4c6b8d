/**
 * Exchange's pure rules (docs/exchange.md): the price of one execution (spread, fee on the
 * direction's side, every rounding in the service's favour), the amount and daily limits, the
 * reference types of a member exchange and of a merchant conversion (their entry kinds and lines:
 * src/money/posting-rules/exchange.ts). No database, no clock.
 */
import { convert, rateAfterSpread } from '../../money/index.js';
import type { FeeSide } from './tables.js';

// ---------------------------------------------------------------------------------------------
// Price

export interface PriceInput {
  /** Minor units of the from-asset, > 0. */
  fromAmount: bigint;
  fromScale: number;
  toScale: number;
  /** Mid-market units of to-asset per from unit (the rate service's answer). */
  midRate: string;
  spreadBps: number;
  feeSide: FeeSide;
  feeBps: number;
  /** Fixed part of the fee, minor units of the fee asset (the from-asset or the to-asset by `feeSide`). */
  feeFixed: bigint;
}

export interface Price {
  /** Mid less the spread, rounded down to 10 places: the rate the member gets. */
  rate: string;
  /** Net amount received, minor units of the to-asset. */
  toAmount: bigint;
  /** Minor units of the fee asset. */
  fee: bigint;
  feeSide: FeeSide;
}

export type PriceRefusal = 'fee_consumes_principal' | 'converts_to_nothing';

/** basis points of an amount, rounded up (a fee is charged: up). */
export const bpsUp = (amount: bigint, bps: number): bigint => (amount * BigInt(bps) + 9_999n) / 10_000n;

/**
 * From-side fee: fee = from × fee_bps (up) + fixed, taken out of from_amount; the rest is converted
 * at the rate, rounded down. To-side fee: the whole from_amount is converted (down), then
 * fee = gross × fee_bps (up) + fixed is taken out of it. The member always spends exactly
 * `fromAmount`. A fee as large as what it is taken from is a refusal, as is a zero net amount.
 */
export function priceExchange(p: PriceInput): Price | { refusal: PriceRefusal } {
  if (p.fromAmount <= 0n) return { refusal: 'converts_to_nothing' };
  const rate = rateAfterSpread(p.midRate, p.spreadBps);
  if (p.feeSide === 'from') {
    const fee = bpsUp(p.fromAmount, p.feeBps) + p.feeFixed;
    if (fee >= p.fromAmount) return { refusal: 'fee_consumes_principal' };
    const toAmount = convert(p.fromAmount - fee, p.fromScale, p.toScale, rate, 'down');
    if (toAmount <= 0n) return { refusal: 'converts_to_nothing' };
    return { rate, toAmount, fee, feeSide: 'from' };
  }
  const gross = convert(p.fromAmount, p.fromScale, p.toScale, rate, 'down');
  if (gross <= 0n) return { refusal: 'converts_to_nothing' };
  const fee = bpsUp(gross, p.feeBps) + p.feeFixed;
  if (fee >= gross) return { refusal: 'fee_consumes_principal' };
  return { rate, toAmount: gross - fee, fee, feeSide: 'to' };
}

// ---------------------------------------------------------------------------------------------
// Limits (minor units of the from-asset; null = none)

export interface DirectionLimits {
  minAmount: bigint;
  maxAmount: bigint | null;
  memberDailyAmount: bigint | null;
  memberDailyCount: number | null;
}

export type LimitBreach =
  | { kind: 'amount_out_of_range'; which: 'below_minimum' | 'above_single_cap' }
  | { kind: 'limit_exceeded'; limit_type: 'single' | 'daily'; limit_scope: 'member' | 'merchant' };

/**
 * One execution of `amount` against the direction: below the minimum or above the single cap is
 * `amount_out_of_range` (reference: "amount outside the product's range (below minimum, above
 * single cap)"); over the member's daily amount or count, with what the day already holds, is
 * `limit_exceeded` (`daily`, `member`).
 */
export function limitBreach(
  amount: bigint,
  limits: DirectionLimits,
  today: { amount: bigint; count: number },
): LimitBreach | undefined {
  if (amount < limits.minAmount) return { kind: 'amount_out_of_range', which: 'below_minimum' };
  if (limits.maxAmount !== null && amount > limits.maxAmount)
    return { kind: 'amount_out_of_range', which: 'above_single_cap' };
  if (limits.memberDailyAmount !== null && today.amount + amount > limits.memberDailyAmount)
    return { kind: 'limit_exceeded', limit_type: 'daily', limit_scope: 'member' };
  if (limits.memberDailyCount !== null && today.count + 1 > limits.memberDailyCount)
    return { kind: 'limit_exceeded', limit_type: 'daily', limit_scope: 'member' };
  return undefined;
}

/** Whether an execution of `amount` asks for step-up under the direction's threshold (null: never; at or above: yes).
 * */
export const needsStepUp = (amount: bigint, threshold: bigint | null): boolean =>
  threshold !== null && amount >= threshold;

// ---------------------------------------------------------------------------------------------
// Entry kinds. One execution posts two entries under the order's id: `exchange.sell` (from-asset)
// and `exchange.buy` (to-asset); their lines are src/money/posting-rules/exchange.ts.

export const exchangeReferenceType = 'exchange_order';
export const conversionReferenceType = 'merchant_conversion';

/**
 * A quote request as its idempotency record compares it (route access `canonicalBody`): the
 * reference's "the same key, direction and amount return the same locked quote" makes `usdt` the
 * asset `USDT` is (codes are case-insensitive) and `250.000000` the amount `250` is (a zero tail
 * is accepted and changes nothing). Only those spellings meet; anything the quote would refuse
 * stays as sent, so a refused spelling never replays an accepted quote. Total on any input.
 */
export function quoteRequestIdentity(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of ['from_asset', 'to_asset'] as const) {
    if (typeof out[field] === 'string') out[field] = (out[field] as string).toUpperCase();
  }
  if (typeof out.from_amount === 'string') out.from_amount = withoutZeroTail(out.from_amount);
  return out;
}

/** `250.500` → `250.5`, `250.000` → `250`; any other text unchanged. */
function withoutZeroTail(amount: string): string {
  const m = /^([0-9]+)\.([0-9]*?)0+$/.exec(amount);
  if (!m) return amount;
  return m[2] === '' ? m[1]! : `${m[1]}.${m[2]}`;
}
