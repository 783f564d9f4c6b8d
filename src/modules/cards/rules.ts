import { memberFeeToMerchant, platformAccount, type EntryLine } from '../../money/index.js';
import type { Address } from './tables.js';

/**
 * Pure rules of card issuing: posting rules of the opening fee, the fee in the source asset,
 * expiry and address checks, the limit validator and the merchant-rule validator (docs/cards.md).
 */

export const cardReferenceType = 'card_application';

export const cardEntryKinds = {
  feeFreeze: 'card.fee_freeze',
  feeCharge: 'card.fee_charge',
  feeRefund: 'card.fee_refund',
} as const;

export interface FeeMoney {
  memberId: string;
  merchantId: string;
  fee: bigint;
}

/** Application created: the opening fee is frozen (available → frozen). */
export function feeFreezeLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'debit', amount: p.fee },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'credit', amount: p.fee },
  ];
}

/**
 * Card opened: the frozen fee is charged. It leaves the member through settlement clearing and is
 * the merchant's income (`memberFeeToMerchant`), like a remittance fee; custody is not asked for
 * it, since the source asset may have been bought through the exchange desk.
 */
export function feeChargeLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: p.fee },
    { account: platformAccount('settlement_clearing', p.merchantId), side: 'credit', amount: p.fee },
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Rejected or failed: the frozen fee goes back (frozen → available). */
export function feeRefundLines(p: FeeMoney): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'frozen' }, side: 'debit', amount: p.fee },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: p.fee },
  ];
}

/**
 * The opening fee (card-currency minor units) in a source asset's minor units: the products' source
 * assets are USD stablecoins, taken 1:1; the conversion rounds up when the asset has fewer places.
 */
export function feeInSource(feeMinor: bigint, cardScale: number, sourceScale: number): bigint {
  if (sourceScale >= cardScale) return feeMinor * 10n ** BigInt(sourceScale - cardScale);
  const d = 10n ** BigInt(cardScale - sourceScale);
  return (feeMinor + d - 1n) / d;
}

/** A card's expiry as the member reads it from the card: `MM/YY`. */
export function expiryText(month: number, year: number): string {
  return `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;
}

export const expiryShape = '^(0[1-9]|1[0-2])/[0-9]{2}$';

export type FieldProblem = { key: string; reason: string };

/** The address of a physical card's shipping or its billing address (ISO 3166-1 alpha-2 upper case; only the shape). */
export function addressProblems(a: Partial<Record<keyof Address, unknown>> | undefined, prefix = ''): FieldProblem[] {
  if (!a || typeof a !== 'object') return [{ key: prefix.replace(/\.$/, '') || 'address', reason: 'required' }];
  const out: FieldProblem[] = [];
  for (const k of ['address', 'city', 'postal_code'] as const) {
    if (typeof a[k] !== 'string' || (a[k] as string).trim() === '') out.push({ key: `${prefix}${k}`, reason: 'required' });
  }
  if (typeof a.country !== 'string' || a.country === '') out.push({ key: `${prefix}country`, reason: 'required' });
  else if (!/^[A-Z]{2}$/.test(a.country)) out.push({ key: `${prefix}country`, reason: 'must be ISO 3166-1 alpha-2, upper case' });
  if (a.state !== undefined && (typeof a.state !== 'string' || a.state.trim() === '')) out.push({ key: `${prefix}state`, reason: 'omit where the country has none' });
  return out;
}

export function normaliseAddress(a: Address): Address {
  const out: Address = { address: a.address.trim(), city: a.city.trim(), country: a.country, postal_code: a.postal_code.trim() };
  if (a.state !== undefined) out.state = a.state.trim();
  return out;
}

export interface Limits {
  single: bigint;
  daily: bigint;
  monthly: bigint;
}

export type LimitProblem = { layer: keyof Limits; reason: 'below_one_unit' | 'above_product_cap' | 'inconsistent' };

/**
 * `PATCH /v1/cards/{id}/limits` (reference): 0 means no limit at that layer; each non-zero value at
 * least one whole currency unit and not above the product's cap; single ≤ daily ≤ monthly among
 * the non-zero values. `next` is the merged set (omitted fields keep the current value).
 */
export function limitProblems(next: Limits, caps: Limits, scale: number): LimitProblem[] {
  const unit = 10n ** BigInt(scale);
  const out: LimitProblem[] = [];
  for (const layer of ['single', 'daily', 'monthly'] as const) {
    const v = next[layer];
    if (v === 0n) continue;
    if (v < unit) out.push({ layer, reason: 'below_one_unit' });
    else if (v > caps[layer]) out.push({ layer, reason: 'above_product_cap' });
  }
  const set = (['single', 'daily', 'monthly'] as const).filter((l) => next[l] !== 0n);
  for (let i = 1; i < set.length; i++) {
    if (next[set[i - 1]!] > next[set[i]!]) out.push({ layer: set[i]!, reason: 'inconsistent' });
  }
  return out;
}

/**
 * What stays when a push of limits fails: per layer the tighter of the confirmed and the requested
 * value (0 = no limit, so any limit is tighter than none); then a lower layer above a higher one is
 * brought down to it (single ≤ daily ≤ monthly among non-zero values), which changes nothing a
 * member can spend: the higher layer caps it anyway.
 */
export function tighterLimits(confirmed: Limits, requested: Limits): Limits {
  const t = (a: bigint, b: bigint) => (a === 0n ? b : b === 0n ? a : a < b ? a : b);
  const monthly = t(confirmed.monthly, requested.monthly);
  const daily = t(confirmed.daily, requested.daily);
  const single = t(confirmed.single, requested.single);
  const dailyCapped = daily === 0n ? 0n : t(daily, monthly);
  const above = dailyCapped !== 0n ? dailyCapped : monthly;
  return { single: single === 0n ? 0n : t(single, above), daily: dailyCapped, monthly };
}

export const merchantRuleListMax = 200;
export const mccShape = /^[0-9]{4}$/;
export const merchantNameLengthMax = 100;

export interface MerchantRulesInput {
  rule_type: string;
  merchant_names?: unknown;
  mcc_list?: unknown;
}

/** `PUT /v1/cards/{id}/merchant-rules` body (reference): the `fields` of an `invalid_fields` answer, empty when valid. */
export function merchantRuleProblems(input: MerchantRulesInput): FieldProblem[] {
  const out: FieldProblem[] = [];
  if (input.rule_type !== 'white' && input.rule_type !== 'black') out.push({ key: 'rule_type', reason: 'must be white or black' });
  const names = input.merchant_names ?? [];
  const mccs = input.mcc_list ?? [];
  if (!Array.isArray(names)) out.push({ key: 'merchant_names', reason: 'must be an array of strings' });
  else {
    if (names.length > merchantRuleListMax) out.push({ key: 'merchant_names', reason: `at most ${merchantRuleListMax} entries` });
    names.forEach((n, i) => {
      if (typeof n !== 'string' || n.trim() === '' || n.length > merchantNameLengthMax) out.push({ key: `merchant_names[${i}]`, reason: `a name of 1 to ${merchantNameLengthMax} characters` });
    });
  }
  if (!Array.isArray(mccs)) out.push({ key: 'mcc_list', reason: 'must be an array of strings' });
  else {
    if (mccs.length > merchantRuleListMax) out.push({ key: 'mcc_list', reason: `at most ${merchantRuleListMax} entries` });
    mccs.forEach((m, i) => {
      if (typeof m !== 'string' || !mccShape.test(m)) out.push({ key: `mcc_list[${i}]`, reason: 'a four-digit ISO 18245 MCC' });
    });
  }
  if (Array.isArray(names) && Array.isArray(mccs) && names.length === 0 && mccs.length === 0) {
    out.push({ key: 'merchant_names', reason: 'merchant_names and mcc_list must not both be empty' });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replacement, closing and expiry (replacements.ts, closing.ts; docs/cards.md).

export const lifecycleEntryKinds = {
  /** A card's spendable balance back to the member's available balance (card currency). */
  balanceReturn: 'card.balance_return',
  replacementFeeFreeze: 'card.replacement_fee_freeze',
  replacementFeeCharge: 'card.replacement_fee_charge',
  replacementFeeRelease: 'card.replacement_fee_release',
} as const;

export const replacementReferenceType = 'card_replacement';
/** Closing and expiry return a card's balance under (`card`, `<card id>:close` / `<card id>:expiry`): each happens once per card. */
export const cardReferenceTypeOfCard = 'card';

/**
 * A card stops (security replacement, closing confirmed, expiry): its spendable balance goes back
 * to the member's available balance, in the card currency (the same asset, so custody does not
 * change). Only `card:<id>` moves: amounts held by authorisations stay in `card_held:<id>` and
 * leave it as their clearings or reversals come (see `heldReleaseToAvailableLines`).
 */
export function balanceReturnLines(p: { memberId: string; cardId: string; amount: bigint }): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'card', cardId: p.cardId }, side: 'debit', amount: p.amount },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: p.amount },
  ];
}

/**
 * A hold reversed (or an authorisation expired) after the card's balance went back: the amount
 * goes from `card_held:<id>` straight to available, never onto a card that cannot spend any more.
 */
export function heldReleaseToAvailableLines(p: { memberId: string; cardId: string; amount: bigint }): EntryLine[] {
  return [
    { account: { owner: 'member', memberId: p.memberId, bucket: 'card_held', cardId: p.cardId }, side: 'debit', amount: p.amount },
    { account: { owner: 'member', memberId: p.memberId, bucket: 'available' }, side: 'credit', amount: p.amount },
  ];
}

/**
 * The fees of a replacement in card-currency minor units (the product's settings): a security
 * reason pays the replacement fee, plus postage for a physical card; a non-security reason
 * (the issuer's or the post's fault) pays nothing.
 */
export function replacementFees(product: { replacementFee: bigint; postageFee: bigint; formFactor: 'virtual' | 'physical' }, security: boolean): { replacement: bigint; postage: bigint } {
  if (!security) return { replacement: 0n, postage: 0n };
  return { replacement: product.replacementFee, postage: product.formFactor === 'physical' ? product.postageFee : 0n };
}

/**
 * The source asset the replacement fees are taken in: the card's application's source asset
 * when its available balance covers the fee, else the first of the product's source assets that
 * does (the products' source assets are USD stablecoins, taken 1:1, `feeInSource`). Undefined when
 * none does.
 */
export function replacementFeeAsset(preferred: string, productSources: readonly string[], canPay: (asset: string) => boolean): string | undefined {
  const order = [preferred, ...productSources.filter((a) => a !== preferred)];
  return order.find(canPay);
}
