/**
 * The posting rules of the cards flows (docs/cards.md): the opening and replacement fees, top-ups,
 * card transactions (authorisation holds, clearings, reversals, refunds), and a card that stops
 * (its balance and its held amounts back to the member). Pure functions from amounts (minor
 * units) to the lines of one entry; the areas post them (src/modules/cards/).
 */
import { memberAccount, platformAccount } from '../accounts.js';
import type { EntryLine } from '../posting.js';
import { debitCredit, memberFeeToMerchant } from '../rules.js';

// ---------------------------------------------------------------------------------------------
// Entry kinds; with (reference type, reference id) each posts once.

/** The opening fee of a card application. */
export const cardEntryKinds = {
  feeFreeze: 'card.fee_freeze',
  feeCharge: 'card.fee_charge',
  feeRefund: 'card.fee_refund',
} as const;

/** What every money movement of a card shares (top-ups, transactions). */
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

/** Replacement, closing and expiry (cards/replacements/, cards/closing/). */
export const lifecycleEntryKinds = {
  /** A card's spendable balance back to the member's available balance (card currency). */
  balanceReturn: 'card.balance_return',
  replacementFeeFreeze: 'card.replacement_fee_freeze',
  replacementFeeCharge: 'card.replacement_fee_charge',
  replacementFeeRelease: 'card.replacement_fee_release',
} as const;

// ---------------------------------------------------------------------------------------------
// The accounts a card's money moves between.

const cardBucket = (memberId: string, cardId: string, bucket: 'card' | 'card_held') => ({
  owner: 'member' as const,
  memberId,
  bucket,
  cardId,
});
/** The platform's settlement clearing kept for the card's merchant. */
const settlementClearing = (merchantId: string) => platformAccount('settlement_clearing', merchantId);

/**
 * Where money arriving for a card goes: `card` (onto `card:<id>`) while the card can still be
 * used, `available` (the member's available balance, card currency) once it stopped
 * (`cardStopped` in cards/cards/state.ts): its balance was or will be returned, so nothing may land on it.
 */
export type CardMoneyDestination = 'card' | 'available';
const cardDestination = (memberId: string, cardId: string, to: CardMoneyDestination) =>
  to === 'card' ? cardBucket(memberId, cardId, 'card') : memberAccount(memberId, 'available');

// ---------------------------------------------------------------------------------------------
// The opening fee (applications) and the replacement fee, in the source asset.

export interface FeeMoney {
  memberId: string;
  merchantId: string;
  fee: bigint;
}

/** Application created: the opening fee is frozen (available → frozen). */
export function feeFreezeLines(p: FeeMoney): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'available'), memberAccount(p.memberId, 'frozen'), p.fee);
}

/**
 * Card opened: the frozen fee is charged. It leaves the member through settlement clearing and is
 * the merchant's income (`memberFeeToMerchant`), like a remittance fee; custody is not asked for
 * it, since the source asset may have been bought through the exchange desk.
 */
export function feeChargeLines(p: FeeMoney): EntryLine[] {
  return [
    ...debitCredit(memberAccount(p.memberId, 'frozen'), platformAccount('settlement_clearing', p.merchantId), p.fee),
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/** Rejected or failed: the frozen fee goes back (frozen → available). */
export function feeRefundLines(p: FeeMoney): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'frozen'), memberAccount(p.memberId, 'available'), p.fee);
}

// ---------------------------------------------------------------------------------------------
// Top-ups, referenced by the top-up id.

export interface TopUpMoney {
  memberId: string;
  merchantId: string;
  cardId: string;
  amount: bigint;
  fee: bigint;
  arrival: bigint;
}

/** Top-up created: amount plus fee frozen (available → frozen), source asset. */
export function topUpFreezeLines(p: TopUpMoney): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'available'), memberAccount(p.memberId, 'frozen'), p.amount + p.fee);
}

/**
 * Credited, source asset: the freeze leaves to the card issuer through settlement clearing
 * (custody untouched, as exchange); the fee comes back from it as the merchant's fee (fee
 * retained against fee income, as exchange's merchant fee).
 */
export function topUpSettleLines(p: TopUpMoney): EntryLine[] {
  return [
    ...debitCredit(memberAccount(p.memberId, 'frozen'), settlementClearing(p.merchantId), p.amount + p.fee),
    ...memberFeeToMerchant(p.merchantId, p.fee),
  ];
}

/**
 * Credited, card currency: the issuer's load arrives on the card (settlement clearing → card), or,
 * confirmed after the card stopped, on the member's available balance in the card currency.
 */
export function topUpCreditLines(p: TopUpMoney, to: CardMoneyDestination = 'card'): EntryLine[] {
  return debitCredit(settlementClearing(p.merchantId), cardDestination(p.memberId, p.cardId, to), p.arrival);
}

/** Failed: the freeze released in full (frozen → available). */
export function topUpFailLines(p: TopUpMoney): EntryLine[] {
  return debitCredit(memberAccount(p.memberId, 'frozen'), memberAccount(p.memberId, 'available'), p.amount + p.fee);
}

// ---------------------------------------------------------------------------------------------
// Card transactions, referenced by the transaction id.

export interface CardMove {
  memberId: string;
  cardId: string;
  amount: bigint;
}

/** The clearing of an authorisation held at `held`: what leaves the card, what goes back, what more is taken. */
export function clearingSplit(held: bigint, cleared: bigint): { fromHeld: bigint; released: bigint; extra: bigint } {
  if (cleared <= held) return { fromHeld: cleared, released: held - cleared, extra: 0n };
  return { fromHeld: held, released: 0n, extra: cleared - held };
}

/** Authorisation approved: the amount is held (card → card_held). */
export function authHoldLines(p: CardMove): EntryLine[] {
  return debitCredit(cardBucket(p.memberId, p.cardId, 'card'), cardBucket(p.memberId, p.cardId, 'card_held'), p.amount);
}

/**
 * Clearing of an authorisation holding `held` for `cleared`: the cleared amount leaves to the card
 * network (→ settlement clearing), from the hold first; a smaller clearing releases the rest of
 * the hold to the card (to available once the card stopped), a larger one takes the difference
 * from the card balance. One entry.
 */
export function clearingLines(
  p: { memberId: string; merchantId: string; cardId: string; held: bigint; cleared: bigint },
  to: CardMoneyDestination = 'card',
): EntryLine[] {
  const s = clearingSplit(p.held, p.cleared);
  const lines: EntryLine[] = [];
  if (p.held > 0n)
    lines.push({ account: cardBucket(p.memberId, p.cardId, 'card_held'), side: 'debit', amount: p.held });
  if (s.extra > 0n) lines.push({ account: cardBucket(p.memberId, p.cardId, 'card'), side: 'debit', amount: s.extra });
  if (p.cleared > 0n) lines.push({ account: settlementClearing(p.merchantId), side: 'credit', amount: p.cleared });
  if (s.released > 0n)
    lines.push({ account: cardDestination(p.memberId, p.cardId, to), side: 'credit', amount: s.released });
  return lines;
}

/** Reversal of an approved authorisation: the hold goes back (card_held → card; card_held → available once the card
 * stopped). */
export function reversalLines(p: CardMove, to: CardMoneyDestination = 'card'): EntryLine[] {
  if (to === 'available') return heldReleaseToAvailableLines(p);
  return debitCredit(cardBucket(p.memberId, p.cardId, 'card_held'), cardBucket(p.memberId, p.cardId, 'card'), p.amount);
}

/** Refund of cleared spending: the network pays it back onto the card (settlement clearing → card; → available once the
 * card stopped). */
export function refundLines(p: CardMove & { merchantId: string }, to: CardMoneyDestination = 'card'): EntryLine[] {
  return debitCredit(settlementClearing(p.merchantId), cardDestination(p.memberId, p.cardId, to), p.amount);
}

// ---------------------------------------------------------------------------------------------
// A card that stops: replacement, closing, expiry.

/**
 * A card stops (security replacement, closing confirmed, expiry): its spendable balance goes back
 * to the member's available balance, in the card currency (the same asset, so custody does not
 * change). Only `card:<id>` moves: amounts held by authorisations stay in `card_held:<id>` and
 * leave it as their clearings or reversals come (see `heldReleaseToAvailableLines`).
 */
export function balanceReturnLines(p: CardMove): EntryLine[] {
  return debitCredit(cardBucket(p.memberId, p.cardId, 'card'), memberAccount(p.memberId, 'available'), p.amount);
}

/**
 * A hold reversed (or an authorisation expired) after the card's balance went back: the amount
 * goes from `card_held:<id>` straight to available, never onto a card that cannot spend any more.
 */
export function heldReleaseToAvailableLines(p: CardMove): EntryLine[] {
  return debitCredit(cardBucket(p.memberId, p.cardId, 'card_held'), memberAccount(p.memberId, 'available'), p.amount);
}
