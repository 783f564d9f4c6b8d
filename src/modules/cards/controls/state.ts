import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../../upstreams/port.js';
import { statusQueryDecision } from '../shared/state.js';

// Reconciliation of an unconfirmed merchant-rule set (docs/cards.md, "Reconciliation"): what the
// issuer's answer to a status query means. Only what the issuer says counts; an unanswered query
// leaves everything as it is.

export type RulesReconcileDecision =
  /** The issuer holds the requested set: `synced: true`. */
  | { kind: 'confirm' }
  /** The issuer refused it: the confirmed set comes back. */
  | { kind: 'refused' }
  /** The issuer never received it (past the grace): pushed again with the same request id. */
  | { kind: 'repush' }
  | { kind: 'wait' };

/** What a status query of an unconfirmed merchant-rule set's request means. */
export function rulesQueryDecision(
  answer: StatusOutcome,
  ageMs: number,
  notFoundGraceMs: number,
): RulesReconcileDecision {
  return statusQueryDecision(answer, ageMs, notFoundGraceMs, { kind: 'repush' }, (found): RulesReconcileDecision => {
    switch (providerStatusOf(found.status)) {
      case 'succeeded':
        return { kind: 'confirm' };
      case 'failed':
        return { kind: 'refused' };
      default:
        return { kind: 'wait' };
    }
  });
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
