/**
 * What callers see of corridors (pure): the payee form, and the operator's view of a corridor.
 *
 * `GET /v1/remit/payee-form-schema` (over the enabled corridors): the field contract as a
 * form a client renders without code changes. The five selectors (country, currency, payment
 * method, clearing system, entity type) come first, each with the values the catalogue allows
 * given what is already chosen; a selector not yet chosen is the `step`, and nothing after it is
 * given. With all five chosen the corridor's fields follow. Every selector, and every field whose
 * value changes what else is asked or how it is checked, carries `refresh_on_change: true`
 * (Wise's `refreshRequirementsOnChange`): on change, ask again with the new value.
 */
import { formatAmount } from '../../../money/index.js';
import { ApiError } from '../../../platform/errors.js';
import { refreshKeys, type FieldSpec } from './contracts.js';
import { servedEntityTypes, type Corridor } from './queries.js';
import type { EntityType } from './tables.js';

export interface Selection {
  country_code?: string;
  currency?: string;
  payment_method?: string;
  clearing_system?: string;
  entity_type?: string;
}

export const selectorKeys = ['country_code', 'currency', 'payment_method', 'clearing_system', 'entity_type'] as const;
type SelectorKey = (typeof selectorKeys)[number];

const selectorLabels: Record<SelectorKey, string> = {
  country_code: 'Recipient bank country',
  currency: 'Payout currency',
  payment_method: 'Payment method',
  clearing_system: 'Clearing system',
  entity_type: 'Recipient type',
};

const shapes: Record<SelectorKey, RegExp> = {
  country_code: /^[A-Z]{2}$/,
  currency: /^[A-Z]{3}$/,
  payment_method: /^(LOCAL|SWIFT)$/,
  clearing_system: /^.{1,32}$/su,
  entity_type: /^(INDIVIDUAL|COMPANY)$/,
};

export interface FormField {
  key: string;
  label: string;
  type: string;
  required: boolean;
  max_length: number;
  pattern: string | null;
  enum: string[] | null;
  example: string | null;
  description: string | null;
  /** `bank_details`, `address`, or null for top-level keys: for grouping on screen. */
  group: string | null;
  /** Set when the field is part of the account identifier (at least one account number, IBAN or proxy is needed). */
  account_identifier: string | null;
  /** The selector's chosen value (selectors only). */
  value: string | null;
  refresh_on_change: boolean;
}

export interface FormSchema {
  /** The first selector not yet chosen, or `fields` once the whole form is given. */
  step: SelectorKey | 'fields';
  selection: Record<SelectorKey, string | null>;
  fields: FormField[];
}

const distinct = (values: string[]) => [...new Set(values)].sort();

function optionsFor(key: SelectorKey, corridors: Corridor[]): string[] {
  switch (key) {
    case 'country_code':
      return distinct(corridors.map((c) => c.country));
    case 'currency':
      return distinct(corridors.map((c) => c.currency));
    case 'payment_method':
      return distinct(corridors.map((c) => c.paymentMethod));
    case 'clearing_system':
      return distinct(corridors.map((c) => c.clearingSystem));
    case 'entity_type':
      return distinct(corridors.flatMap(servedEntityTypes));
  }
}

function matches(key: SelectorKey, c: Corridor, value: string): boolean {
  switch (key) {
    case 'country_code':
      return c.country === value;
    case 'currency':
      return c.currency === value;
    case 'payment_method':
      return c.paymentMethod === value;
    case 'clearing_system':
      return c.clearingSystem === value;
    case 'entity_type':
      return servedEntityTypes(c).includes(value as EntityType);
  }
}

function contractField(spec: FieldSpec, refresh: Set<string>): FormField {
  const dot = spec.key.lastIndexOf('.');
  return {
    key: spec.key,
    label: spec.label,
    type: spec.type,
    required: spec.required,
    max_length: spec.max_length,
    pattern: spec.pattern ?? null,
    enum: spec.enum ?? null,
    example: spec.example ?? null,
    description: spec.description ?? null,
    group: dot > 0 ? spec.key.slice(0, dot) : null,
    account_identifier: spec.account_identifier ?? null,
    value: null,
    refresh_on_change: refresh.has(spec.key),
  };
}

/**
 * The form for a selection. A malformed value is `invalid_request`; a well-formed one that no
 * enabled corridor serves (given the earlier choices) is `corridor_not_supported`.
 */
export function formSchema(enabled: Corridor[], selection: Selection): FormSchema {
  let candidates = enabled;
  const chosen = {} as Record<SelectorKey, string | null>;
  const fields: FormField[] = [];
  let step: FormSchema['step'] = 'fields';
  for (const key of selectorKeys) {
    const value = selection[key];
    if (value !== undefined && !shapes[key].test(value)) throw new ApiError('invalid_request', `${key} is malformed.`);
    chosen[key] = value ?? null;
    if (step !== 'fields') continue;
    const options = optionsFor(key, candidates);
    fields.push({
      key,
      label: selectorLabels[key],
      type: 'enum',
      required: true,
      max_length: 32,
      pattern: null,
      enum: options,
      example: null,
      description: null,
      group: null,
      account_identifier: null,
      value: value ?? null,
      refresh_on_change: true,
    });
    if (value === undefined) {
      step = key;
      continue;
    }
    candidates = candidates.filter((c) => matches(key, c, value));
    if (candidates.length === 0)
      throw new ApiError(
        'corridor_not_supported',
        `No enabled corridor serves ${key} ${value} with the earlier choices.`,
      );
  }
  if (step === 'fields') {
    const corridor = candidates[0]!;
    const contract = corridor.contracts[chosen.entity_type as EntityType] ?? [];
    const refresh = refreshKeys(contract);
    for (const spec of contract) fields.push(contractField(spec, refresh));
  }
  return { step, selection: chosen, fields };
}

// ---------------------------------------------------------------------------------------------
// The operator's view of a corridor

export function operatorCorridorView(c: Corridor, scale: number) {
  const amount = (v: bigint | null) => (v === null ? null : formatAmount(v, scale));
  return {
    id: c.id,
    environment: c.environment,
    country: c.country,
    currency: c.currency,
    payment_method: c.paymentMethod,
    clearing_system: c.clearingSystem,
    enabled: c.enabled,
    entity_types: servedEntityTypes(c),
    contracts: c.contracts,
    restricted_jurisdictions: [...c.policy.restrictedJurisdictions],
    confirmable_routing_types: [...c.policy.confirmableRoutingTypes],
    min_kyc_level: c.minKycLevel,
    fee_bps: c.feeBps,
    fee_fixed: formatAmount(c.feeFixed, scale),
    fx_spread_bps: c.fxSpreadBps,
    payout_min: formatAmount(c.limits.payoutMin, scale),
    member_single_max: amount(c.limits.memberSingleMax),
    member_daily_max: amount(c.limits.memberDailyMax),
    merchant_single_max: amount(c.limits.merchantSingleMax),
    merchant_daily_max: amount(c.limits.merchantDailyMax),
  };
}
