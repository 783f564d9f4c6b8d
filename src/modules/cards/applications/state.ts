import type {
  ApplicationDecision,
  ApplicationReviewStatus,
  ApplicationStatusOutcome,
} from '../../../upstreams/card/port.js';
import { providerStatusOf, type CallOutcome } from '../../../upstreams/port.js';
import type { ApplicationStatus } from './tables.js';
import { statusQueryDecision, type Verdict } from '../shared/state.js';

/** The application's state machine as pure functions (docs/cards.md, "States"), and what the issuer's answers mean for
 * it. */

/**
 * Whether the member can still send the supplement: a pending work order before its expiry. Past
 * it the order is the expiry's (workers.ts, supplement expiry) even before that process has run, so a screen
 * submitted late never wins over the expiry.
 */
export function supplementOpen(
  app: { status: string; supplement_status: string | null; supplement_expires_at: Date | null },
  now: Date,
): boolean {
  return (
    app.status === 'need_docs' &&
    app.supplement_status === 'pending' &&
    (app.supplement_expires_at === null || app.supplement_expires_at.getTime() > now.getTime())
  );
}

export type ApplicationEvent = 'need_docs' | 'approved' | 'rejected' | 'supplement_submitted' | 'supplement_expired';

/**
 * Application transitions. `pending` is the issuer's review; `need_docs` waits for the member's
 * supplement (its submission returns the application to review; its expiry fails it);
 * `approved`, `rejected`, `failed` are terminal. A decision repeated is a replay.
 */
export function applicationTransition(
  from: ApplicationStatus,
  event: ApplicationEvent,
  supplementPending: boolean,
): Verdict<ApplicationStatus> {
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
      return from === 'need_docs' && supplementPending
        ? { kind: 'move', to: 'pending' }
        : refuse('No supplement is pending.');
    case 'supplement_expired':
      return from === 'need_docs' && supplementPending
        ? { kind: 'move', to: 'failed' }
        : refuse('No supplement is pending.');
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
  /** Nothing learnt: stays `pending`, fee frozen, asked again; `unknownStatus` (outside our enumeration) also raises
   * one alert. */
  | { kind: 'wait'; unknownStatus?: string };

/** Whether an accepted submission's status says the issuer has it under review (anything else is not taken as
 * received). */
export function applicationReceived(raw: string): boolean {
  return raw === 'in_review' || raw === 'processing' || raw === 'succeeded';
}

const reviewStatuses: readonly ApplicationReviewStatus[] = ['in_review', 'approved', 'rejected', 'need_docs'];
/** Whether an issuer status is outside both our provider enumeration and the application review states (sandbox
 * `SANDBOX_UNKNOWN_STATUS`). */
export function outsideApplicationEnumeration(raw: string): boolean {
  return providerStatusOf(raw) === undefined && !(reviewStatuses as readonly string[]).includes(raw);
}

const waitOn = (raw: string): ApplicationReconcileDecision =>
  outsideApplicationEnumeration(raw) ? { kind: 'wait', unknownStatus: raw } : { kind: 'wait' };

/** What the issuer's answer to `applicationStatus` means for an application whose submission outcome is unknown. */
export function applicationQueryDecision(
  answer: ApplicationStatusOutcome,
  callAgeMs: number,
  notFoundGraceMs: number,
): ApplicationReconcileDecision {
  return statusQueryDecision(
    answer,
    callAgeMs,
    notFoundGraceMs,
    { kind: 'resubmit' },
    (found): ApplicationReconcileDecision => {
      switch (found.status) {
        case 'in_review':
          return { kind: 'received' };
        case 'approved':
          // Approved without the card's data is not an answer we can open a card on.
          return found.card ? { kind: 'decide', decision: 'approved' } : { kind: 'wait' };
        case 'rejected':
        case 'need_docs':
          return { kind: 'decide', decision: found.status };
        default:
          return waitOn(found.status);
      }
    },
  );
}

/** A re-submission's answer: refused → rejected (fee refunded); received only on a status that says so; anything else
 * waits. */
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
