import type { CardStatus } from '../cards/tables.js';
import type { Verdict } from '../shared/state.js';

// Closing and expiry (closing/service.ts; docs/cards.md, "Replacement, closing and expiry").

export interface CloseSubject {
  status: CardStatus;
  inFlightReplacement: boolean;
}

/**
 * `POST /v1/cards/{id}/close`: `unactivated` or `active` → `closing` (the issuer is asked to
 * cancel the card); `closing` and `closed` are replays (the call is naturally idempotent);
 * `expired`, `replaced`, or a replacement in flight: `state_invalid`.
 */
export function closeVerdict(card: CloseSubject): Verdict<CardStatus> {
  if (card.status === 'closing' || card.status === 'closed') return { kind: 'replay', at: card.status };
  if (card.status === 'expired' || card.status === 'replaced')
    return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (card.inFlightReplacement)
    return { kind: 'refuse', code: 'state_invalid', reason: 'The card has a replacement in flight.' };
  return { kind: 'move', to: 'closing' };
}

/**
 * The issuer's answer to a closing card's cancellation: confirmed → `closed` (then the balance
 * goes back); refused → the status it was closed from. Anything else (timeout, 5xx) is not an
 * answer: the card stays `closing` and is reconciled. A card no longer `closing` is a replay.
 */
export function closeOutcomeTransition(
  from: CardStatus,
  outcome: 'confirmed' | 'refused',
  closingFrom: 'unactivated' | 'active' | null,
): Verdict<CardStatus> {
  if (from !== 'closing') return { kind: 'replay', at: from };
  if (outcome === 'confirmed') return { kind: 'move', to: 'closed' };
  return { kind: 'move', to: closingFrom ?? 'active' };
}

/** A card is valid through the last day of its expiry month (UTC): it expires at the first instant of the next month.
 * */
export function cardExpiresAt(expMonth: number, expYear: number): Date {
  return new Date(Date.UTC(expYear, expMonth, 1));
}

/** Whether the clock's `now` has passed the card's expiry and the card is in a state that expires (`unactivated`,
 * `active`). */
export function expiryDue(card: { status: CardStatus; expMonth: number; expYear: number }, now: Date): boolean {
  return (
    (card.status === 'unactivated' || card.status === 'active') &&
    cardExpiresAt(card.expMonth, card.expYear).getTime() <= now.getTime()
  );
}
