import type { ActivationStatusOutcome, ApplicationDecision, ApplicationReviewStatus, ApplicationStatusOutcome } from '../../upstreams/card/port.js';
import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../upstreams/port.js';
import type { ApplicationStatus, CardStatus, FormFactor, InventoryStatus, ReplacementReason, ReplacementStatus } from './tables.js';

/**
 * The card and application state machines as pure functions (docs/cards.md, "States"). The
 * service asks them on every path and obeys the answer: `move` (do it), `replay` (already there:
 * answer as if done, change nothing), `refuse` (with the reference's code).
 */

export type Verdict<S> =
  | { kind: 'move'; to: S }
  | { kind: 'replay'; at: S }
  | { kind: 'refuse'; code: 'state_invalid' | 'product_not_available'; reason: string };

/** The reference's constants: 3 counted activation failures lock the card for 24 hours. */
export const activationFailuresMax = 3;
export const activationLockSeconds = 24 * 3600;

/** Card states after which nothing may change the card any more (billing address, rules, limits...). */
export const terminalCardStatuses: readonly CardStatus[] = ['closed', 'expired', 'replaced'];

export function isTerminalCard(status: CardStatus): boolean {
  return terminalCardStatuses.includes(status);
}

/** A card opened from an approved application: physical cards wait for activation, virtual ones are active at once. */
export function openingStatus(formFactor: FormFactor): CardStatus {
  return formFactor === 'physical' ? 'unactivated' : 'active';
}

export function openingInventory(formFactor: FormFactor): InventoryStatus | null {
  return formFactor === 'physical' ? 'in_production' : null;
}

/** The inventory states in which a physical card may be activated (the reference: shipped, binding, bound). */
export const activatableInventory: readonly InventoryStatus[] = ['shipped', 'binding', 'bound'];

export interface ActivationSubject {
  status: CardStatus;
  formFactor: FormFactor;
  inventory: InventoryStatus | null;
  lockedUntil: Date | null;
}

/**
 * `POST /v1/cards/{id}/activate` before the issuer is asked: a repeat on an active card is a
 * replay (200, not counted, no step-up); a virtual card is not activated (`product_not_available`);
 * anything but `unactivated`, a locked card or a card not yet shipped is `state_invalid`.
 */
export function activationVerdict(card: ActivationSubject, now: Date): Verdict<CardStatus> {
  if (card.status === 'active') return { kind: 'replay', at: 'active' };
  if (card.formFactor !== 'physical') return { kind: 'refuse', code: 'product_not_available', reason: 'Only physical cards are activated.' };
  if (card.status !== 'unactivated') return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (isLocked(card.lockedUntil, now)) return { kind: 'refuse', code: 'state_invalid', reason: 'The card is locked after too many failed activations.' };
  if (!card.inventory || !activatableInventory.includes(card.inventory)) {
    return { kind: 'refuse', code: 'state_invalid', reason: 'The card has not been shipped yet.' };
  }
  return { kind: 'move', to: 'active' };
}

export function isLocked(lockedUntil: Date | null, now: Date): boolean {
  return lockedUntil !== null && lockedUntil.getTime() > now.getTime();
}

/**
 * A counted activation failure (a wrong element, or an explicit refusal by the issuer): the new
 * count and, at the third, the lock's end. Network faults and issuer 5xx never come here. A card
 * already locked (attempts asked of the issuer at once: another one's answer locked it first)
 * keeps its lock as it is: a later failure never lifts or shortens it.
 */
export function afterActivationFailure(failuresBefore: number, now: Date, lockedUntil: Date | null = null): { failures: number; lockedUntil: Date | null } {
  if (isLocked(lockedUntil, now)) return { failures: failuresBefore, lockedUntil };
  const failures = failuresBefore + 1;
  if (failures >= activationFailuresMax) return { failures: 0, lockedUntil: new Date(now.getTime() + activationLockSeconds * 1000) };
  return { failures, lockedUntil: null };
}

/**
 * Whether the member can still send the supplement: a pending work order before its expiry. Past
 * it the order is the expiry's (workers.ts) even before that process has run, so a screen
 * submitted late never wins over the expiry.
 */
export function supplementOpen(app: { status: string; supplement_status: string | null; supplement_expires_at: Date | null }, now: Date): boolean {
  return app.status === 'need_docs' && app.supplement_status === 'pending'
    && (app.supplement_expires_at === null || app.supplement_expires_at.getTime() > now.getTime());
}

export type ApplicationEvent = 'need_docs' | 'approved' | 'rejected' | 'supplement_submitted' | 'supplement_expired';

/**
 * Application transitions. `pending` is the issuer's review; `need_docs` waits for the member's
 * supplement (its submission returns the application to review; its expiry fails it);
 * `approved`, `rejected`, `failed` are terminal. A decision repeated is a replay.
 */
export function applicationTransition(from: ApplicationStatus, event: ApplicationEvent, supplementPending: boolean): Verdict<ApplicationStatus> {
  const refuse = (reason: string): Verdict<ApplicationStatus> => ({ kind: 'refuse', code: 'state_invalid', reason });
  switch (event) {
    case 'need_docs':
      if (from === 'need_docs') return { kind: 'replay', at: from };
      return from === 'pending' ? { kind: 'move', to: 'need_docs' } : refuse(`The application is ${from}.`);
    case 'approved':
    case 'rejected':
      if (from === event) return { kind: 'replay', at: from };
      // An application waiting for documents is decided only after they arrive (or it fails).
      return from === 'pending' ? { kind: 'move', to: event } : refuse(`The application is ${from}.`);
    case 'supplement_submitted':
      return from === 'need_docs' && supplementPending ? { kind: 'move', to: 'pending' } : refuse('No supplement is pending.');
    case 'supplement_expired':
      return from === 'need_docs' && supplementPending ? { kind: 'move', to: 'failed' } : refuse('No supplement is pending.');
  }
}

/** Whether an application's opening fee is still frozen (decided ones have been charged or refunded). */
export function feeFrozen(status: ApplicationStatus): boolean {
  return status === 'pending' || status === 'need_docs';
}

// ---------------------------------------------------------------------------------------------
// Reconciliation of unknown outcomes (docs/cards.md, "Reconciliation"): what the issuer's answer
// to a status query means. Only what the issuer says moves money; an unanswered query, a status
// outside our enumeration or a request still in flight leaves everything as it is.

export type ApplicationReconcileDecision =
  /** The issuer decided: applied like any decision (approved → card opened and fee charged, …). */
  | { kind: 'decide'; decision: ApplicationDecision }
  /** The issuer has it and is reviewing: the submission's outcome is known (`accepted`). */
  | { kind: 'received' }
  /** The issuer never received it (past the grace of a call in flight): submitted again, same request id. */
  | { kind: 'resubmit' }
  /** Nothing learnt: stays `pending`, fee frozen, asked again; `unknownStatus` (outside our enumeration) also raises one alert. */
  | { kind: 'wait'; unknownStatus?: string };

/** Whether an accepted submission's status says the issuer has it under review (anything else is not taken as received). */
export function applicationReceived(raw: string): boolean {
  return raw === 'in_review' || raw === 'processing' || raw === 'succeeded';
}

const reviewStatuses: readonly ApplicationReviewStatus[] = ['in_review', 'approved', 'rejected', 'need_docs'];
/** Whether an issuer status is outside both our provider enumeration and the application review states (sandbox `SANDBOX_UNKNOWN_STATUS`). */
export function outsideApplicationEnumeration(raw: string): boolean {
  return providerStatusOf(raw) === undefined && !(reviewStatuses as readonly string[]).includes(raw);
}

const waitOn = (raw: string): ApplicationReconcileDecision => (outsideApplicationEnumeration(raw) ? { kind: 'wait', unknownStatus: raw } : { kind: 'wait' });

/** What the issuer's answer to `applicationStatus` means for an application whose submission outcome is unknown. */
export function applicationQueryDecision(answer: ApplicationStatusOutcome, callAgeMs: number, notFoundGraceMs: number): ApplicationReconcileDecision {
  switch (answer.kind) {
    case 'timeout':
    case 'unknown':
      return { kind: 'wait' };
    case 'not_found':
      return callAgeMs >= notFoundGraceMs ? { kind: 'resubmit' } : { kind: 'wait' };
    case 'found':
      switch (answer.status) {
        case 'in_review':
          return { kind: 'received' };
        case 'approved':
          // Approved without the card's data is not an answer we can open a card on.
          return answer.card ? { kind: 'decide', decision: 'approved' } : { kind: 'wait' };
        case 'rejected':
        case 'need_docs':
          return { kind: 'decide', decision: answer.status };
        default:
          return waitOn(answer.status);
      }
  }
}

/** A re-submission's answer: refused → rejected (fee refunded); received only on a status that says so; anything else waits. */
export function applicationResubmitDecision(answer: CallOutcome): ApplicationReconcileDecision {
  switch (answer.kind) {
    case 'accepted':
      return applicationReceived(answer.status) ? { kind: 'received' } : waitOn(answer.status);
    case 'rejected':
      return { kind: 'decide', decision: 'rejected' };
    default:
      return { kind: 'wait' };
  }
}

export type RulesReconcileDecision =
  /** The issuer holds the requested set: `synced: true`. */
  | { kind: 'confirm' }
  /** The issuer refused it: the confirmed set comes back. */
  | { kind: 'refused' }
  /** The issuer never received it (past the grace): pushed again with the same request id. */
  | { kind: 'repush' }
  | { kind: 'wait' };

/** What a status query of an unconfirmed merchant-rule set's request means. */
export function rulesQueryDecision(answer: StatusOutcome, ageMs: number, notFoundGraceMs: number): RulesReconcileDecision {
  switch (answer.kind) {
    case 'timeout':
    case 'unknown':
      return { kind: 'wait' };
    case 'not_found':
      return ageMs >= notFoundGraceMs ? { kind: 'repush' } : { kind: 'wait' };
    case 'found':
      switch (providerStatusOf(answer.status)) {
        case 'succeeded':
          return { kind: 'confirm' };
        case 'failed':
          return { kind: 'refused' };
        default:
          return { kind: 'wait' };
      }
  }
}

/** What the answer to a re-push means (the same rules as the request's own answer). */
export function rulesCallDecision(answer: CallOutcome): RulesReconcileDecision {
  switch (answer.kind) {
    case 'accepted':
      return providerStatusOf(answer.status) === 'succeeded' ? { kind: 'confirm' } : { kind: 'wait' };
    case 'rejected':
      return { kind: 'refused' };
    default:
      return { kind: 'wait' };
  }
}

/** How long after a lost activation answer its retry may reuse the step-up challenge it consumed: the idempotency window (real time, as the key's own). */
export const activationResumeSeconds = 24 * 3600;

export type ActivationResumeDecision =
  /** The issuer has the card active: activate it here without asking for the elements again. */
  | { kind: 'activated' }
  /** The issuer has it inactive (the lost call never arrived, or did not match): ask with the elements. */
  | { kind: 'ask' }
  /** No answer: the outcome stays unknown (502/504, nothing counted). */
  | { kind: 'unknown'; timeout: boolean };

/** What the issuer's activation status means for the retry of an activation whose answer was lost. */
export function activationResumeDecision(answer: ActivationStatusOutcome): ActivationResumeDecision {
  switch (answer.kind) {
    case 'found':
      return answer.active ? { kind: 'activated' } : { kind: 'ask' };
    case 'not_found':
      return { kind: 'ask' };
    case 'timeout':
      return { kind: 'unknown', timeout: true };
    case 'unknown':
      return { kind: 'unknown', timeout: false };
  }
}

// ---------------------------------------------------------------------------------------------
// Replacement, closing and expiry (replacements.ts, closing.ts; docs/cards.md, "Replacement,
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

export type RequestVerdict = { kind: 'accept'; security: boolean } | { kind: 'refuse'; code: 'state_invalid' | 'invalid_request'; reason: string };

/**
 * `POST /v1/cards/{id}/replacements` before anything is written: a reason outside the enumeration
 * is `invalid_request`, and a non-security reason on an activated card or a second in-flight
 * replacement `state_invalid` (the reference answers 500 to all three; extensions 6). A card
 * `closed`, `replaced`, `expired` (the reference) or `closing` (it is on its way to `closed`) is
 * `state_invalid`.
 */
export function replacementRequestVerdict(card: ReplacementSubject, reason: string): RequestVerdict {
  if (!isReplacementReason(reason)) return { kind: 'refuse', code: 'invalid_request', reason: `reason must be one of ${replacementReasons.join(', ')}.` };
  if (isTerminalCard(card.status) || card.status === 'closing') return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (card.inFlight) return { kind: 'refuse', code: 'state_invalid', reason: 'The card already has a replacement in flight.' };
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
  const refuse = (): Verdict<ReplacementStatus> => ({ kind: 'refuse', code: 'state_invalid', reason: `The replacement is ${from}.` });
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
  if (card.status === 'expired' || card.status === 'replaced') return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (card.inFlightReplacement) return { kind: 'refuse', code: 'state_invalid', reason: 'The card has a replacement in flight.' };
  return { kind: 'move', to: 'closing' };
}

/**
 * The issuer's answer to a closing card's cancellation: confirmed → `closed` (then the balance
 * goes back); refused → the status it was closed from. Anything else (timeout, 5xx) is not an
 * answer: the card stays `closing` and is reconciled. A card no longer `closing` is a replay.
 */
export function closeOutcomeTransition(from: CardStatus, outcome: 'confirmed' | 'refused', closingFrom: 'unactivated' | 'active' | null): Verdict<CardStatus> {
  if (from !== 'closing') return { kind: 'replay', at: from };
  if (outcome === 'confirmed') return { kind: 'move', to: 'closed' };
  return { kind: 'move', to: closingFrom ?? 'active' };
}

/** A card is valid through the last day of its expiry month (UTC): it expires at the first instant of the next month. */
export function cardExpiresAt(expMonth: number, expYear: number): Date {
  return new Date(Date.UTC(expYear, expMonth, 1));
}

/** Whether the clock's `now` has passed the card's expiry and the card is in a state that expires (`unactivated`, `active`). */
export function expiryDue(card: { status: CardStatus; expMonth: number; expYear: number }, now: Date): boolean {
  return (card.status === 'unactivated' || card.status === 'active') && cardExpiresAt(card.expMonth, card.expYear).getTime() <= now.getTime();
}

/**
 * Whether a card may spend (the authorisation decision's first question): only `active` and not
 * frozen by a security replacement. Every other state declines.
 */
export function cardCanSpend(card: { status: CardStatus; frozenAt: Date | null }): boolean {
  return card.status === 'active' && card.frozenAt === null;
}

/** The states in which a card has stopped for good (or is stopping): its balance is, or is about to be, returned. */
const stoppedStatuses: ReadonlySet<CardStatus> = new Set<CardStatus>(['closing', 'closed', 'replaced', 'expired']);

/**
 * Whether money arriving for a card (a reversal, a refund, the rest of a smaller clearing, a
 * top-up the issuer confirms late) must go to the member's available balance instead of onto
 * `card:<id>`: the card is closing, closed, replaced, expired, or frozen by a security
 * replacement. Each of these has returned, or will return, the card's balance and the card can
 * never spend again (a closing refused puts it back, and the money then simply is on available).
 * An `unactivated` card is not stopped: it is loadable and spends once activated.
 */
export function cardStopped(card: { status: CardStatus; frozenAt: Date | null }): boolean {
  return stoppedStatuses.has(card.status) || card.frozenAt !== null;
}
