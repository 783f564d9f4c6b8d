/**
 * Remittance orders' pure rules: the order's price (fee on top, FX through the one rate service's
 * helpers), its limits, and the posting rules (docs/remittance.md). Whether a corridor can serve a
 * payee: corridors/rules.ts. No database, no clock: callers pass what these need.
 */
import { memberFeeToMerchant, platformAccount, type EntryLine } from '../../../money/index.js';
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
// Posting rules (one asset per entry: the source asset; with the order id each kind posts once)

export const remitReferenceType = 'remittance_order';

export const remitEntryKinds = {
  freeze: 'remittance.freeze',
  complete: 'remittance.complete',
  fail: 'remittance.fail',
  return: 'remittance.return',
} as const;

export interface OrderMoney {
  memberId: string;
  merchantId: string;
  amount: bigint;
  fee: bigint;
}

/** Order created: amount plus fee are frozen (available → frozen). */
export function remitFreezeLines(p: OrderMoney): EntryLine[] {
  const total = p.amount + p.fee;
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'debit', amount: total },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'credit', amount: total },
  ];
}

/**
 * Paid out: the freeze is cleared. Amount and fee leave the member through settlement clearing
 * (custody untouched, as QR payments and exchanges); the fee comes back to the merchant as its
 * income (`memberFeeToMerchant`). Custody is not asked for the fee: a member may send an asset
 * the merchant holds no custody of (bought through the exchange desk), and the completion must
 * still post: the provider has paid out.
 */
export function remitCompleteLines(p: OrderMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: p.amount + p.fee },
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'credit', amount: p.amount + p.fee },
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Failed (refused, never received): the freeze is released in full, fee included (frozen → available). */
export function remitFailLines(p: OrderMoney): EntryLine[] {
  const total = p.amount + p.fee;
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: total },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: total },
  ];
}

/** Returned by the beneficiary bank after completion: the amount comes back to available; the fee is kept. */
export function remitReturnLines(p: OrderMoney): EntryLine[] {
  return [
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'debit', amount: p.amount },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: p.amount },
  ];
}
