import type { ApplicationStatus, CardStatus, FormFactor, InventoryStatus } from './tables.js';
import type { ActivationStatusOutcome, ApplicationDecision, ApplicationStatusOutcome } from '../../upstreams/card.js';
import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../upstreams/types.js';

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
 * count and, at the third, the lock's end. Network faults and issuer 5xx never come here.
 */
export function afterActivationFailure(failuresBefore: number, now: Date): { failures: number; lockedUntil: Date | null } {
  const failures = failuresBefore + 1;
  if (failures >= activationFailuresMax) return { failures: 0, lockedUntil: new Date(now.getTime() + activationLockSeconds * 1000) };
  return { failures, lockedUntil: null };
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
  /** Nothing learnt: stays `pending`, the fee frozen, asked again later. */
  | { kind: 'wait' };

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
          return { kind: 'wait' };
      }
  }
}

/** What the answer to a re-submission means: the issuer's refusal rejects it (fee refunded); no answer waits. */
export function applicationResubmitDecision(answer: CallOutcome): ApplicationReconcileDecision {
  switch (answer.kind) {
    case 'accepted':
      return { kind: 'received' };
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

/** How long after a lost activation answer its retry may reuse the step-up challenge it consumed: the idempotency window. */
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
