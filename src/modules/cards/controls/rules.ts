import type { FieldProblem } from '../shared/rules.js';

/** Pure rules of card controls (docs/cards.md): the limit validator and the merchant-rule validator. */

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

/** `PUT /v1/cards/{id}/merchant-rules` body (reference): the `fields` of an `invalid_fields` answer, empty when valid.
 * */
export function merchantRuleProblems(input: MerchantRulesInput): FieldProblem[] {
  const out: FieldProblem[] = [];
  if (input.rule_type !== 'white' && input.rule_type !== 'black')
    out.push({ key: 'rule_type', reason: 'must be white or black' });
  const names = input.merchant_names ?? [];
  const mccs = input.mcc_list ?? [];
  if (!Array.isArray(names)) out.push({ key: 'merchant_names', reason: 'must be an array of strings' });
  else {
    if (names.length > merchantRuleListMax)
      out.push({ key: 'merchant_names', reason: `at most ${merchantRuleListMax} entries` });
    names.forEach((n, i) => {
      if (typeof n !== 'string' || n.trim() === '' || n.length > merchantNameLengthMax)
        out.push({ key: `merchant_names[${i}]`, reason: `a name of 1 to ${merchantNameLengthMax} characters` });
    });
  }
  if (!Array.isArray(mccs)) out.push({ key: 'mcc_list', reason: 'must be an array of strings' });
  else {
    if (mccs.length > merchantRuleListMax)
      out.push({ key: 'mcc_list', reason: `at most ${merchantRuleListMax} entries` });
    mccs.forEach((m, i) => {
      if (typeof m !== 'string' || !mccShape.test(m))
        out.push({ key: `mcc_list[${i}]`, reason: 'a four-digit ISO 18245 MCC' });
    });
  }
  if (Array.isArray(names) && Array.isArray(mccs) && names.length === 0 && mccs.length === 0) {
    out.push({ key: 'merchant_names', reason: 'merchant_names and mcc_list must not both be empty' });
  }
  return out;
}
