/**
 * Pure rules of card transactions (docs/cards.md "Card money"): an authorisation's hold (how long
 * it lasts, what a partial reversal or a clearing may take from it, what it counts against the
 * limits), the decision on an authorisation (the posting rules of card transactions:
 * src/money/posting-rules/cards.ts). No database; times are given.
 */
import { cardCanSpend } from '../cards/state.js';
import type { CardStatus } from '../cards/tables.js';
import type { CardReversalReason, CardTransactionStatus } from './tables.js';

/**
 * What an authorisation counts against the daily and monthly limits: what it really holds or
 * spent. `approved`: the hold still in place (the authorised amount less what partial reversals
 * released); `cleared`: the cleared amount (less or more than authorised); `reversed` (by the
 * network or by expiry) and `declined`: nothing. Refunds do not give the limit back: they are
 * money coming back, not spending undone (as issuers count velocity).
 */
export function limitCounted(a: {
  status: CardTransactionStatus;
  amount: bigint;
  clearedAmount: bigint;
  reversedAmount: bigint;
}): bigint {
  if (a.status === 'approved') return a.amount - a.reversedAmount;
  if (a.status === 'cleared') return a.clearedAmount;
  return 0n;
}

// ---------------------------------------------------------------------------------------------
// Authorisation holds: expiry, partial reversal, late clearing

/** Days a hold lasts when the network neither clears nor reverses it (most merchants). */
export const authorizationHoldDaysDefault = 7;
/** Lodging, vehicle rental and cruise lines: authorised ahead of the final amount, held longer (as Visa and Mastercard
 * allow). */
export const authorizationHoldDaysExtended = 30;
const extendedHoldMccs: ReadonlySet<string> = new Set(['4411', '7011', '7512', '7513', '7519']);

/** How long an authorisation's hold lasts: 30 days for lodging (7011, 3501–3999), vehicle rental (7512, 7513, 7519,
 * 3351–3500) and cruise lines (4411); 7 days otherwise. */
export function authorizationHoldDays(mcc: string): number {
  if (extendedHoldMccs.has(mcc)) return authorizationHoldDaysExtended;
  if (/^[0-9]{4}$/.test(mcc) && mcc >= '3351' && mcc <= '3999') return authorizationHoldDaysExtended;
  return authorizationHoldDaysDefault;
}

/** When the hold of an authorisation approved at `authorizedAt` (merchant clock) is released if still open. */
export function authorizationExpiresAt(authorizedAt: Date, mcc: string): Date {
  return new Date(authorizedAt.getTime() + authorizationHoldDays(mcc) * 86_400_000);
}

/** Whether an approved authorisation's hold has expired at `now`. */
export function authorizationExpired(a: { status: CardTransactionStatus; expiresAt: Date | null }, now: Date): boolean {
  return a.status === 'approved' && a.expiresAt !== null && a.expiresAt.getTime() <= now.getTime();
}

/** What an authorisation still holds on `card_held`: the authorised amount less what was released; nothing once it left
 * `approved`. */
export function heldOf(a: { status: CardTransactionStatus; amount: bigint; reversedAmount: bigint }): bigint {
  return a.status === 'approved' ? a.amount - a.reversedAmount : 0n;
}

/**
 * A reversal of `requested` (default: all that is held) of an authorisation holding `held`:
 * more than zero and at most the hold (otherwise undefined: `amount_out_of_range`); `full` when
 * it releases the whole hold (the authorisation becomes `reversed`), otherwise it stays
 * `approved` with a smaller hold.
 */
export function reversalOf(held: bigint, requested: bigint | undefined): { amount: bigint; full: boolean } | undefined {
  const amount = requested ?? held;
  if (amount <= 0n || amount > held) return undefined;
  return { amount, full: amount === held };
}

/**
 * What a clearing may take from `card_held` for an authorisation, or undefined when it may not
 * be cleared (`state_invalid`): an `approved` one clears against its remaining hold; one whose
 * hold expired (`reversed` by `expired`) is a late presentment: it still clears, with no hold
 * left (the whole amount from the card balance, as the network may present up to its own limits);
 * one reversed by the network, declined or already cleared: no.
 */
export function clearableHold(a: {
  status: CardTransactionStatus;
  amount: bigint;
  reversedAmount: bigint;
  reversalReason: CardReversalReason | null;
}): bigint | undefined {
  if (a.status === 'approved') return heldOf(a);
  if (a.status === 'reversed' && a.reversalReason === 'expired') return 0n;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Authorisation decision

export interface RuleSet {
  ruleType: 'white' | 'black';
  merchantNames: readonly string[];
  mccList: readonly string[];
}

export interface LimitLayers {
  single: bigint;
  daily: bigint;
  monthly: bigint;
}

export interface AuthorizationFacts {
  cardStatus: CardStatus;
  /** When a security replacement froze the card (null: not frozen). */
  cardFrozenAt: Date | null;
  cardCurrency: string;
  /** Minor units of `currency`. */
  amount: bigint;
  currency: string;
  merchantName: string;
  mcc: string;
  /** The card's merchant rules (null: none). */
  rules: RuleSet | null;
  /** The member's card-level limits (0 = none at that layer). */
  cardLimits: LimitLayers;
  /** The product's caps (always apply). */
  productLimits: LimitLayers;
  /** What authorisations already count today / this month (`limitCounted`; card currency, the merchant's clock). */
  spentToday: bigint;
  spentThisMonth: bigint;
  /** The card's spendable balance (`card` bucket). */
  balance: bigint;
}

export const declineReasons = [
  'card_not_active',
  'currency_not_supported',
  'invalid_amount',
  'merchant_not_allowed',
  'merchant_blocked',
  'card_limit_single',
  'product_limit_single',
  'card_limit_daily',
  'product_limit_daily',
  'card_limit_monthly',
  'product_limit_monthly',
  'insufficient_funds',
] as const;
export type DeclineReason = (typeof declineReasons)[number];

export type AuthorizationDecision = { approved: true } | { approved: false; reason: DeclineReason };

/** A merchant name as matched by the rules: trimmed, case-insensitive. */
export const merchantKey = (name: string): string => name.trim().toLowerCase();

/** Whether a rule set lets the spending through: white = only listed names or MCCs; black = none of them. */
export function ruleVerdict(rules: RuleSet | null, merchantName: string, mcc: string): DeclineReason | undefined {
  if (!rules) return undefined;
  const key = merchantKey(merchantName);
  const listed = rules.merchantNames.some((n) => merchantKey(n) === key) || rules.mccList.includes(mcc);
  if (rules.ruleType === 'white') return listed ? undefined : 'merchant_not_allowed';
  return listed ? 'merchant_blocked' : undefined;
}

/**
 * Decides an authorisation, in this order: the card's status (`cardCanSpend`: only `active` and
 * not frozen by a security replacement spends), the
 * currency (the card's own), the merchant rules, the single, daily and monthly limits (at each
 * layer the member's card-level limit first, then the product's cap), then the card balance.
 * The first refusal is the decline reason.
 */
export function decideAuthorization(f: AuthorizationFacts): AuthorizationDecision {
  const decline = (reason: DeclineReason): AuthorizationDecision => ({ approved: false, reason });
  if (!cardCanSpend({ status: f.cardStatus, frozenAt: f.cardFrozenAt })) return decline('card_not_active');
  if (f.currency !== f.cardCurrency) return decline('currency_not_supported');
  if (f.amount <= 0n) return decline('invalid_amount');
  const rule = ruleVerdict(f.rules, f.merchantName, f.mcc);
  if (rule) return decline(rule);
  const over = (limit: bigint, total: bigint) => limit > 0n && total > limit;
  const layers: Array<[keyof LimitLayers, bigint]> = [
    ['single', f.amount],
    ['daily', f.spentToday + f.amount],
    ['monthly', f.spentThisMonth + f.amount],
  ];
  for (const [layer, total] of layers) {
    if (over(f.cardLimits[layer], total)) return decline(`card_limit_${layer}`);
    if (over(f.productLimits[layer], total)) return decline(`product_limit_${layer}`);
  }
  if (f.balance < f.amount) return decline('insufficient_funds');
  return { approved: true };
}

/** The limits in force at the issuer: per layer the tighter of what is recorded and what it last confirmed (0 = none).
 * */
export function effectiveLimits(recorded: LimitLayers, confirmed: LimitLayers): LimitLayers {
  const t = (a: bigint, b: bigint) => (a === 0n ? b : b === 0n ? a : a < b ? a : b);
  return {
    single: t(recorded.single, confirmed.single),
    daily: t(recorded.daily, confirmed.daily),
    monthly: t(recorded.monthly, confirmed.monthly),
  };
}

// ---------------------------------------------------------------------------------------------
// Transactions are referenced by the transaction id; their posting rules: src/money/posting-rules/cards.ts.

export const cardTransactionReferenceType = 'card_transaction';
