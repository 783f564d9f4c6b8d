import type { CardStatus } from '../cards/tables.js';
import type { ReplacementReason, ReplacementStatus } from './tables.js';
import type { Verdict } from '../shared/state.js';
import { isTerminalCard } from '../cards/state.js';

// ---------------------------------------------------------------------------------------------
// Replacement, closing and expiry (replacements/, closing/; docs/cards.md, "Replacement,
// closing and expiry").

/** The reference's security reasons: the card is frozen, its balance returned, cancelled, fees charged. */
export const securityReasons = ['pan_leaked', 'stolen', 'pin_locked', 'damaged', 'user_request', 'expiring'] as const;
/** The reference's non-security reasons: only for a card never activated; inventory row voided, no fees. */
export const nonSecurityReasons = ['lost_in_transit', 'not_received', 'production_error', 'name_error'] as const;
export const replacementReasons: readonly ReplacementReason[] = [...securityReasons, ...nonSecurityReasons];

/** The reference's constant: a replacement note is kept to 200 characters (longer ones are truncated). */
export const replacementNoteMax = 200;

export function isReplacementReason(value: string): value is ReplacementReason {
  return (replacementReasons as readonly string[]).includes(value);
}

export function isSecurityReason(reason: ReplacementReason): boolean {
  return (securityReasons as readonly string[]).includes(reason);
}

/** The reference truncates the note; counted in characters (code points), never cutting a pair. */
export function truncateNote(note: string | undefined): string | null {
  if (note === undefined) return null;
  return [...note].slice(0, replacementNoteMax).join('');
}

export interface ReplacementSubject {
  status: CardStatus;
  /** Another replacement of the card is `requested` or `processing`. */
  inFlight: boolean;
}

export type RequestVerdict =
  { kind: 'accept'; security: boolean } | { kind: 'refuse'; code: 'state_invalid' | 'invalid_request'; reason: string };

/**
 * `POST /v1/cards/{id}/replacements` before anything is written: a reason outside the enumeration
 * is `invalid_request`, and a non-security reason on an activated card or a second in-flight
 * replacement `state_invalid` (the reference answers 500 to all three; extensions 6). A card
 * `closed`, `replaced`, `expired` (the reference) or `closing` (it is on its way to `closed`) is
 * `state_invalid`.
 */
export function replacementRequestVerdict(card: ReplacementSubject, reason: string): RequestVerdict {
  if (!isReplacementReason(reason))
    return {
      kind: 'refuse',
      code: 'invalid_request',
      reason: `reason must be one of ${replacementReasons.join(', ')}.`,
    };
  if (isTerminalCard(card.status) || card.status === 'closing')
    return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (card.inFlight)
    return { kind: 'refuse', code: 'state_invalid', reason: 'The card already has a replacement in flight.' };
  const security = isSecurityReason(reason);
  if (!security && card.status !== 'unactivated') {
    return { kind: 'refuse', code: 'state_invalid', reason: `${reason} is only for a card that was never activated.` };
  }
  return { kind: 'accept', security };
}

export type ReplacementEvent = 'start' | 'complete' | 'fail';

/**
 * The replacement's own states: `requested` (created; nothing moved), `processing` (the executor
 * took it: card frozen, balance returned, fees reserved; then the issuer is asked), `completed`
 * (new card issued, old card `replaced`, fees charged) and `failed` (refused before or during the
 * work; reserved fees released). A repeat of the event that led to a final state is a replay.
 */
export function replacementTransition(from: ReplacementStatus, event: ReplacementEvent): Verdict<ReplacementStatus> {
  const refuse = (): Verdict<ReplacementStatus> => ({
    kind: 'refuse',
    code: 'state_invalid',
    reason: `The replacement is ${from}.`,
  });
  switch (event) {
    case 'start':
      if (from === 'processing') return { kind: 'replay', at: from };
      return from === 'requested' ? { kind: 'move', to: 'processing' } : refuse();
    case 'complete':
      if (from === 'completed') return { kind: 'replay', at: from };
      return from === 'processing' ? { kind: 'move', to: 'completed' } : refuse();
    case 'fail':
      if (from === 'failed') return { kind: 'replay', at: from };
      return from === 'requested' || from === 'processing' ? { kind: 'move', to: 'failed' } : refuse();
  }
}

/**
 * What the executor's first step finds on the card: a card that left the states it can be
 * replaced from (closed, expired meanwhile) or, for a non-security reason, got activated
 * meanwhile fails the replacement with that reason; otherwise it goes on.
 */
export function replacementStartProblem(card: { status: CardStatus }, security: boolean): string | undefined {
  if (isTerminalCard(card.status) || card.status === 'closing') return `card_${card.status}`;
  if (!security && card.status !== 'unactivated') return 'card_activated';
  return undefined;
}
