/**
 * Pure rules of an authorisation's hold (docs/cards.md "Card money"): how long it lasts, what a
 * partial reversal or a clearing may take from it, and what it counts against the limits. No
 * database; times are given.
 */
import type { CardReversalReason, CardTransactionStatus } from './tables.js';

/**
 * What an authorisation counts against the daily and monthly limits: what it really holds or
 * spent. `approved`: the hold still in place (the authorised amount less what partial reversals
 * released); `cleared`: the cleared amount (less or more than authorised); `reversed` (by the
 * network or by expiry) and `declined`: nothing. Refunds do not give the limit back: they are
 * money coming back, not spending undone (as issuers count velocity).
 */
export function limitCounted(a: { status: CardTransactionStatus; amount: bigint; clearedAmount: bigint; reversedAmount: bigint }): bigint {
  if (a.status === 'approved') return a.amount - a.reversedAmount;
  if (a.status === 'cleared') return a.clearedAmount;
  return 0n;
}

// ---------------------------------------------------------------------------------------------
// Authorisation holds: expiry, partial reversal, late clearing

/** Days a hold lasts when the network neither clears nor reverses it (most merchants). */
export const authorizationHoldDaysDefault = 7;
/** Lodging, vehicle rental and cruise lines: authorised ahead of the final amount, held longer (as Visa and Mastercard allow). */
export const authorizationHoldDaysExtended = 30;
const extendedHoldMccs: ReadonlySet<string> = new Set(['4411', '7011', '7512', '7513', '7519']);

/** How long an authorisation's hold lasts: 30 days for lodging (7011, 3501–3999), vehicle rental (7512, 7513, 7519, 3351–3500) and cruise lines (4411); 7 days otherwise. */
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

/** What an authorisation still holds on `card_held`: the authorised amount less what was released; nothing once it left `approved`. */
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
export function clearableHold(a: { status: CardTransactionStatus; amount: bigint; reversedAmount: bigint; reversalReason: CardReversalReason | null }): bigint | undefined {
  if (a.status === 'approved') return heldOf(a);
  if (a.status === 'reversed' && a.reversalReason === 'expired') return 0n;
  return undefined;
}
