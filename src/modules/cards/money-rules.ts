/**
 * Pure rules of a card's money (docs/cards.md "Card money"): the top-up price and quote, the
 * member's payment priority, the decision on an authorisation, and the posting rules of top-ups
 * and card transactions. No database, no clock.
 */
import { memberFeeToMerchant, platformAccount, type EntryLine } from '../../ledger/index.js';
import { convert } from '../../upstreams/rates/conversion.js';
import { feeInSource, heldReleaseToAvailableLines } from './rules.js';
import { cardCanSpend } from './state.js';
import type { CardStatus, CardTransactionStatus } from './tables.js';

// The hold of an authorisation (expiry, partial reversals, what limits count): hold-rules.ts.
export * from './hold-rules.js';

// ---------------------------------------------------------------------------------------------
// Top-up price

export interface TopUpPricing {
  feeBps: number;
  /** Minor units of the card currency. */
  feeFixed: bigint;
  /** Minor units of the card currency. */
  topupMin: bigint;
  topupMaxSingle: bigint;
}

export interface TopUpPrice {
  /** Minor units of the source asset. */
  amount: bigint;
  fee: bigint;
  customerTotal: bigint;
  /** Minor units of the card currency at 1:1 (the quote's estimate; the order converts at the real rate). */
  arrivalEstimate: bigint;
}

export type TopUpRefusal = { kind: 'amount_out_of_range'; which: 'below_minimum' | 'above_single_cap' | 'converts_to_nothing' };

/** basis points of an amount, rounded up (a fee is charged: up). */
const bpsUp = (amount: bigint, bps: number): bigint => (amount * BigInt(bps) + 9_999n) / 10_000n;

/**
 * A top-up of `amount` (source-asset minor units): the fee is `feeBps` of it (up) plus the fixed
 * part taken 1:1 into the source asset (up); the customer pays both. The range (the product's
 * `topup_min` and single cap, card currency) is checked on the 1:1 value of `amount`.
 */
export function priceTopUp(amount: bigint, sourceScale: number, cardScale: number, p: TopUpPricing): TopUpPrice | TopUpRefusal {
  const arrivalEstimate = convert(amount, sourceScale, cardScale, '1', 'down');
  if (amount <= 0n || arrivalEstimate <= 0n) return { kind: 'amount_out_of_range', which: 'converts_to_nothing' };
  if (arrivalEstimate < p.topupMin) return { kind: 'amount_out_of_range', which: 'below_minimum' };
  // Above the cap even by a fraction of the card currency's smallest unit.
  if (convert(amount, sourceScale, cardScale, '1', 'up') > p.topupMaxSingle) return { kind: 'amount_out_of_range', which: 'above_single_cap' };
  const fee = bpsUp(amount, p.feeBps) + feeInSource(p.feeFixed, cardScale, sourceScale);
  return { amount, fee, customerTotal: amount + fee, arrivalEstimate };
}

/** What a top-up really delivers: `amount` at the rate fixed at creation, rounded down. */
export function arrivalAt(amount: bigint, sourceScale: number, cardScale: number, rate: string): bigint {
  return convert(amount, sourceScale, cardScale, rate, 'down');
}

// ---------------------------------------------------------------------------------------------
// Top-up dispatch

/** Why a pending top-up is failed instead of being sent to the issuer: the card stopped before it was dispatched. */
export type TopUpStopReason = 'card_closing' | 'card_closed' | 'card_replaced' | 'card_expired' | 'card_frozen' | 'card_replacing';

/**
 * Whether a `pending` top-up may still be sent to the issuer. A card that stopped (`cardStopped`:
 * closing, closed, replaced, expired, frozen by a security replacement) or whose balance a
 * non-security replacement has returned (`replacementReturnedBalance`: the replacement is
 * `processing`) takes no new load: the top-up fails with this reason and its freeze goes back.
 * A replacement only `requested` stops nothing yet (it may still fail): the top-up is dispatched.
 */
export function topUpDispatchProblem(card: { status: CardStatus; frozenAt: Date | null }, replacementReturnedBalance: boolean): TopUpStopReason | undefined {
  switch (card.status) {
    case 'closing': return 'card_closing';
    case 'closed': return 'card_closed';
    case 'replaced': return 'card_replaced';
    case 'expired': return 'card_expired';
    default: break;
  }
  if (card.frozenAt !== null) return 'card_frozen';
  if (replacementReturnedBalance) return 'card_replacing';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Payment priority

export interface SourceCandidate {
  code: string;
  /** Listed, enabled in the catalogue. */
  enabled: boolean;
  /** The member's available balance, minor units. */
  available: bigint;
  /** What the top-up would cost in this asset (amount + fee), minor units. */
  total: bigint;
}

/**
 * The asset a top-up is really charged in. The member's preference stands when the product lists
 * it and the catalogue has it enabled. Otherwise (no preference, delisted, not in the product's
 * list) the member's payment priority decides: the product's source assets in the product's
 * order, the first enabled one whose available balance covers the total; when none covers it,
 * the first enabled one (the top-up then answers `insufficient_balance`). None enabled: undefined.
 * `candidates` are the product's source assets in its order.
 */
export function payingAsset(preferred: string | undefined, candidates: readonly SourceCandidate[]): string | undefined {
  const usable = candidates.filter((c) => c.enabled);
  const wanted = preferred?.toUpperCase();
  if (wanted !== undefined && usable.some((c) => c.code === wanted)) return wanted;
  return (usable.find((c) => c.available >= c.total) ?? usable[0])?.code;
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
  'card_not_active', 'currency_not_supported', 'invalid_amount', 'merchant_not_allowed', 'merchant_blocked',
  'card_limit_single', 'product_limit_single', 'card_limit_daily', 'product_limit_daily', 'card_limit_monthly', 'product_limit_monthly',
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
  const layers: Array<[keyof LimitLayers, bigint]> = [['single', f.amount], ['daily', f.spentToday + f.amount], ['monthly', f.spentThisMonth + f.amount]];
  for (const [layer, total] of layers) {
    if (over(f.cardLimits[layer], total)) return decline(`card_limit_${layer}`);
    if (over(f.productLimits[layer], total)) return decline(`product_limit_${layer}`);
  }
  if (f.balance < f.amount) return decline('insufficient_funds');
  return { approved: true };
}

/** The limits in force at the issuer: per layer the tighter of what is recorded and what it last confirmed (0 = none). */
export function effectiveLimits(recorded: LimitLayers, confirmed: LimitLayers): LimitLayers {
  const t = (a: bigint, b: bigint) => (a === 0n ? b : b === 0n ? a : a < b ? a : b);
  return { single: t(recorded.single, confirmed.single), daily: t(recorded.daily, confirmed.daily), monthly: t(recorded.monthly, confirmed.monthly) };
}

/** The clearing of an authorisation held at `held`: what leaves the card, what goes back, what more is taken. */
export function clearingSplit(held: bigint, cleared: bigint): { fromHeld: bigint; released: bigint; extra: bigint } {
  if (cleared <= held) return { fromHeld: cleared, released: held - cleared, extra: 0n };
  return { fromHeld: held, released: 0n, extra: cleared - held };
}

// ---------------------------------------------------------------------------------------------
// Posting rules. Top-ups are referenced by the top-up id, card transactions by the transaction id.

export const topUpReferenceType = 'card_topup';
export const cardTransactionReferenceType = 'card_transaction';

export const cardMoneyEntryKinds = {
  topUpFreeze: 'card.topup_freeze',
  /** The source-asset side of a credited top-up. */
  topUpSettle: 'card.topup_settle',
  /** The card-currency side of a credited top-up. */
  topUpCredit: 'card.topup_credit',
  topUpFail: 'card.topup_fail',
  authHold: 'card.auth_hold',
  clearing: 'card.clearing',
  reversal: 'card.reversal',
  /** The hold of an authorisation that expired, released (keyed by the authorisation: once). */
  authExpiry: 'card.auth_expiry',
  refund: 'card.refund',
} as const;

export interface TopUpMoney {
  memberId: string;
  merchantId: string;
  cardId: string;
  amount: bigint;
  fee: bigint;
  arrival: bigint;
}

const member = (memberId: string, bucket: 'available' | 'frozen') => ({ owner: 'member' as const, memberId, bucket });
const card = (memberId: string, cardId: string, bucket: 'card' | 'card_held') => ({ owner: 'member' as const, memberId, bucket, cardId });
/** The platform's settlement clearing kept for the card's merchant. */
const clearing = (merchantId: string) => platformAccount('settlement_clearing', merchantId);

/**
 * Where money arriving for a card goes: `card` (onto `card:<id>`) while the card can still be
 * used, `available` (the member's available balance, card currency) once it stopped
 * (`cardStopped` in state.ts): its balance was or will be returned, so nothing may land on it.
 */
export type CardMoneyDestination = 'card' | 'available';
const destination = (memberId: string, cardId: string, to: CardMoneyDestination) => (to === 'card' ? card(memberId, cardId, 'card') : member(memberId, 'available'));

/** Top-up created: amount plus fee frozen (available → frozen), source asset. */
export function topUpFreezeLines(p: TopUpMoney): EntryLine[] {
  return [
    { account: member(p.memberId, 'available'), side: 'debit', amount: p.amount + p.fee },
    { account: member(p.memberId, 'frozen'), side: 'credit', amount: p.amount + p.fee },
  ];
}

/**
 * Credited, source asset: the freeze leaves to the card issuer through settlement clearing
 * (custody untouched, as exchange); the fee comes back from it as the merchant's fee (fee
 * retained against fee income, as exchange's merchant fee).
 */
export function topUpSettleLines(p: TopUpMoney): EntryLine[] {
  return [
    { account: member(p.memberId, 'frozen'), side: 'debit', amount: p.amount + p.fee },
    { account: clearing(p.merchantId), side: 'credit', amount: p.amount + p.fee },
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/**
 * Credited, card currency: the issuer's load arrives on the card (settlement clearing → card), or,
 * confirmed after the card stopped, on the member's available balance in the card currency.
 */
export function topUpCreditLines(p: TopUpMoney, to: CardMoneyDestination = 'card'): EntryLine[] {
  return [
    { account: clearing(p.merchantId), side: 'debit', amount: p.arrival },
    { account: destination(p.memberId, p.cardId, to), side: 'credit', amount: p.arrival },
  ];
}

/** Failed: the freeze released in full (frozen → available). */
export function topUpFailLines(p: TopUpMoney): EntryLine[] {
  return [
    { account: member(p.memberId, 'frozen'), side: 'debit', amount: p.amount + p.fee },
    { account: member(p.memberId, 'available'), side: 'credit', amount: p.amount + p.fee },
  ];
}

export interface CardMove {
  memberId: string;
  cardId: string;
  amount: bigint;
}

/** Authorisation approved: the amount is held (card → card_held). */
export function authHoldLines(p: CardMove): EntryLine[] {
  return [
    { account: card(p.memberId, p.cardId, 'card'), side: 'debit', amount: p.amount },
    { account: card(p.memberId, p.cardId, 'card_held'), side: 'credit', amount: p.amount },
  ];
}

/**
 * Clearing of an authorisation holding `held` for `cleared`: the cleared amount leaves to the card
 * network (→ settlement clearing), from the hold first; a smaller clearing releases the rest of
 * the hold to the card (to available once the card stopped), a larger one takes the difference
 * from the card balance. One entry.
 */
export function clearingLines(p: { memberId: string; merchantId: string; cardId: string; held: bigint; cleared: bigint }, to: CardMoneyDestination = 'card'): EntryLine[] {
  const s = clearingSplit(p.held, p.cleared);
  const lines: EntryLine[] = [];
  if (p.held > 0n) lines.push({ account: card(p.memberId, p.cardId, 'card_held'), side: 'debit', amount: p.held });
  if (s.extra > 0n) lines.push({ account: card(p.memberId, p.cardId, 'card'), side: 'debit', amount: s.extra });
  if (p.cleared > 0n) lines.push({ account: clearing(p.merchantId), side: 'credit', amount: p.cleared });
  if (s.released > 0n) lines.push({ account: destination(p.memberId, p.cardId, to), side: 'credit', amount: s.released });
  return lines;
}

/** Reversal of an approved authorisation: the hold goes back (card_held → card; card_held → available once the card stopped). */
export function reversalLines(p: CardMove, to: CardMoneyDestination = 'card'): EntryLine[] {
  if (to === 'available') return heldReleaseToAvailableLines(p);
  return [
    { account: card(p.memberId, p.cardId, 'card_held'), side: 'debit', amount: p.amount },
    { account: card(p.memberId, p.cardId, 'card'), side: 'credit', amount: p.amount },
  ];
}

/** Refund of cleared spending: the network pays it back onto the card (settlement clearing → card; → available once the card stopped). */
export function refundLines(p: CardMove & { merchantId: string }, to: CardMoneyDestination = 'card'): EntryLine[] {
  return [
    { account: clearing(p.merchantId), side: 'debit', amount: p.amount },
    { account: destination(p.memberId, p.cardId, to), side: 'credit', amount: p.amount },
  ];
}
