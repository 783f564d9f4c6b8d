import type { ActivationStatusOutcome } from '../../../upstreams/card/port.js';
import type { CardStatus, InventoryStatus } from './tables.js';
import type { FormFactor } from '../shared/tables.js';
import type { Verdict } from '../shared/state.js';

/** The card's state machine as pure functions (docs/cards.md, "States"): opening, activation, spending. */

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
  if (card.formFactor !== 'physical')
    return { kind: 'refuse', code: 'product_not_available', reason: 'Only physical cards are activated.' };
  if (card.status !== 'unactivated')
    return { kind: 'refuse', code: 'state_invalid', reason: `The card is ${card.status}.` };
  if (isLocked(card.lockedUntil, now))
    return { kind: 'refuse', code: 'state_invalid', reason: 'The card is locked after too many failed activations.' };
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
export function afterActivationFailure(
  failuresBefore: number,
  now: Date,
  lockedUntil: Date | null = null,
): { failures: number; lockedUntil: Date | null } {
  if (isLocked(lockedUntil, now)) return { failures: failuresBefore, lockedUntil };
  const failures = failuresBefore + 1;
  if (failures >= activationFailuresMax)
    return { failures: 0, lockedUntil: new Date(now.getTime() + activationLockSeconds * 1000) };
  return { failures, lockedUntil: null };
}

/** How long after a lost activation answer its retry may reuse the step-up challenge it consumed: the idempotency
 * window (real time, as the key's own). */
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
