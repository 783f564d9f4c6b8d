import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { completeTicket, type Ticket, voidTicket } from '../hosted-screens/index.js';
import { stepUpCodeMatches } from './code.js';
import { setFailedAttempts } from './queries.js';
import { decideCode, exhaustedOutcome, sandboxStepUpCode, stepUpCodeShape } from './rules.js';

/**
 * How a step-up challenge is completed (docs/step-up.md): by the member's one-time code on the
 * hosted screen (`enterStepUpCode`), or without a code by the sandbox helper (`settleStepUp`).
 * Both run in the hosted framework's transaction, which holds the ticket's row lock and has
 * checked that it is open and unexpired by the merchant's clock.
 */

export type CodeEntry =
  | { kind: 'approved' }
  /** Not six digits: nothing counted. */
  | { kind: 'malformed' }
  | { kind: 'wrong'; attemptsLeft: number }
  /** That was the last wrong code allowed: the challenge is now void. */
  | { kind: 'exhausted' };

/**
 * The member's code for an open challenge. A right code completes it (`approved`); a wrong one is
 * counted, and the fifth voids it. In the sandbox `000000` always passes. The count commits with
 * the framework's transaction even though the page answers with the form again.
 */
export async function enterStepUpCode(
  trx: Transaction<Database>,
  ticket: Ticket,
  entered: string,
  now: Date,
): Promise<CodeEntry> {
  const code = entered.replace(/\s+/g, '');
  if (!stepUpCodeShape.test(code)) return { kind: 'malformed' };
  const matches =
    (ticket.environment === 'sandbox' && code === sandboxStepUpCode) ||
    (await stepUpCodeMatches(code, ticket.secret_hash));
  const decision = decideCode(matches, ticket.failed_attempts);
  switch (decision.kind) {
    case 'approve':
      await completeTicket(trx, ticket.id, now, 'approved');
      return { kind: 'approved' };
    case 'wrong':
      await setFailedAttempts(trx, ticket.id, decision.failedAttempts);
      return { kind: 'wrong', attemptsLeft: decision.attemptsLeft };
    case 'exhausted':
      await setFailedAttempts(trx, ticket.id, decision.failedAttempts);
      await voidTicket(trx, ticket.id, exhaustedOutcome);
      return { kind: 'exhausted' };
  }
}

/**
 * The sandbox helper's outcomes (extensions 8): `approved` completes the challenge as a right
 * code would; `declined` voids it, as a member refusing would.
 */
export async function settleStepUp(
  trx: Transaction<Database>,
  ticket: Ticket,
  outcome: 'approved' | 'declined',
  now: Date,
): Promise<void> {
  if (outcome === 'approved') await completeTicket(trx, ticket.id, now, 'approved');
  else await voidTicket(trx, ticket.id, 'declined');
}
