/**
 * Pure rules of card top-ups (docs/cards.md "Card money"): the price and quote, the dispatch
 * check, the member's payment priority (the posting rules
 * of a top-up: src/money/posting-rules/cards.ts). No database, no clock.
 */
import { convert, minorFromDb, type TopUpMoney } from '../../../money/index.js';
import { feeInSource } from '../applications/rules.js';
import type { CardStatus } from '../cards/tables.js';
import type { CardTopupRow } from './tables.js';

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

export type TopUpRefusal = {
  kind: 'amount_out_of_range';
  which: 'below_minimum' | 'above_single_cap' | 'converts_to_nothing';
};

/** basis points of an amount, rounded up (a fee is charged: up). */
const bpsUp = (amount: bigint, bps: number): bigint => (amount * BigInt(bps) + 9_999n) / 10_000n;

/**
 * A top-up of `amount` (source-asset minor units): the fee is `feeBps` of it (up) plus the fixed
 * part taken 1:1 into the source asset (up); the customer pays both. The range (the product's
 * `topup_min` and single cap, card currency) is checked on the 1:1 value of `amount`.
 */
export function priceTopUp(
  amount: bigint,
  sourceScale: number,
  cardScale: number,
  p: TopUpPricing,
): TopUpPrice | TopUpRefusal {
  const arrivalEstimate = convert(amount, sourceScale, cardScale, '1', 'down');
  if (amount <= 0n || arrivalEstimate <= 0n) return { kind: 'amount_out_of_range', which: 'converts_to_nothing' };
  if (arrivalEstimate < p.topupMin) return { kind: 'amount_out_of_range', which: 'below_minimum' };
  // Above the cap even by a fraction of the card currency's smallest unit.
  if (convert(amount, sourceScale, cardScale, '1', 'up') > p.topupMaxSingle)
    return { kind: 'amount_out_of_range', which: 'above_single_cap' };
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
export type TopUpStopReason =
  'card_closing' | 'card_closed' | 'card_replaced' | 'card_expired' | 'card_frozen' | 'card_replacing';

/**
 * Whether a `pending` top-up may still be sent to the issuer. A card that stopped (`cardStopped`:
 * closing, closed, replaced, expired, frozen by a security replacement) or whose balance a
 * non-security replacement has returned (`replacementReturnedBalance`: the replacement is
 * `processing`) takes no new load: the top-up fails with this reason and its freeze goes back.
 * A replacement only `requested` stops nothing yet (it may still fail): the top-up is dispatched.
 */
export function topUpDispatchProblem(
  card: { status: CardStatus; frozenAt: Date | null },
  replacementReturnedBalance: boolean,
): TopUpStopReason | undefined {
  switch (card.status) {
    case 'closing':
      return 'card_closing';
    case 'closed':
      return 'card_closed';
    case 'replaced':
      return 'card_replaced';
    case 'expired':
      return 'card_expired';
    default:
      break;
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
// Top-ups are referenced by the top-up id; their posting rules: src/money/posting-rules/cards.ts.

export const topUpReferenceType = 'card_topup';

/** A top-up's amounts for its posting lines (src/money/posting-rules/cards.ts). */
export const moneyOf = (row: CardTopupRow): TopUpMoney => ({
  memberId: row.member_id,
  merchantId: row.merchant_id,
  cardId: row.card_id,
  amount: minorFromDb(row.amount),
  fee: minorFromDb(row.fee),
  arrival: minorFromDb(row.arrival_amount),
});
