import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { findTicket } from '../hosted-screens/queries.js';
import { isUsable, type Ticket } from '../hosted-screens/rules.js';
import { stepUpCodeMatches } from './code.js';
import { decideCode, exhaustedOutcome, sandboxStepUpCode, stepUpCodeShape } from './rules.js';

/**
 * How a step-up challenge is completed (docs/step-up.md): by the member entering the one-time code
 * on the hosted screen (`enterStepUpCode`), or in the sandbox by the test helper
 * (`completeStepUpInSandbox`). Either way only an `open`, unexpired challenge moves: to `completed`
 * with the outcome `approved`, or to `void` (declined, or the wrong codes ran out).
 */

export type CodeEntry =
  | { kind: 'approved' }
  /** Not six digits: nothing counted. */
  | { kind: 'malformed' }
  | { kind: 'wrong'; attemptsLeft: number }
  /** That was the last wrong code allowed: the challenge is now void. */
  | { kind: 'exhausted' }
  /** Not open any more (completed, used, void) or expired: nothing to enter. */
  | { kind: 'closed' };

function usableNow(ctx: ServiceContext, trx: Transaction<Database>, t: Ticket): Promise<boolean> {
  return ctx.clock.now(trx, { merchantId: t.merchant_id, environment: t.environment }).then((now) => isUsable(t, now));
}

/**
 * The member's code for challenge `ticketId`. The code is checked against its hash outside any
 * transaction (scrypt takes tens of milliseconds); the decision is then applied to the locked row,
 * which must still be open, unexpired and hold the same hash. In the sandbox `000000` always passes.
 */
export async function enterStepUpCode(ctx: ServiceContext, ticketId: string, code: string): Promise<CodeEntry> {
  const seen = await findTicket(ctx.db, ticketId);
  if (!seen || seen.purpose !== 'step_up') return { kind: 'closed' };
  if (!stepUpCodeShape.test(code)) return { kind: 'malformed' };
  const matches = (seen.environment === 'sandbox' && code === sandboxStepUpCode) || (await stepUpCodeMatches(code, seen.secret_hash));
  return ctx.db.transaction().execute(async (trx): Promise<CodeEntry> => {
    const t = await findTicket(trx, ticketId, true);
    if (!t || t.secret_hash !== seen.secret_hash || !(await usableNow(ctx, trx, t))) return { kind: 'closed' };
    const now = await ctx.clock.now(trx, { merchantId: t.merchant_id, environment: t.environment });
    const decision = decideCode(matches, t.failed_attempts);
    const row = trx.updateTable('hosted_tickets').where('id', '=', t.id);
    switch (decision.kind) {
      case 'approve':
        await row.set({ status: 'completed', outcome: 'approved', completed_at: now }).execute();
        return { kind: 'approved' };
      case 'wrong':
        await row.set({ failed_attempts: decision.failedAttempts }).execute();
        return { kind: 'wrong', attemptsLeft: decision.attemptsLeft };
      case 'exhausted':
        await row.set({ failed_attempts: decision.failedAttempts, status: 'void', outcome: exhaustedOutcome }).execute();
        return { kind: 'exhausted' };
    }
  });
}

/**
 * Settles an open, unexpired challenge without a code: `approved` completes it as a right code
 * would (the sandbox helper, extensions 8), `declined` voids it (the helper, or the member's "this
 * was not me" on the screen). Answers the ticket as it now is, or undefined when it was not an
 * open, unexpired step-up challenge (the helper answers `state_invalid`).
 */
export async function settleStepUp(ctx: ServiceContext, trx: Transaction<Database>, ticketId: string, outcome: 'approved' | 'declined'): Promise<Ticket | undefined> {
  const t = await findTicket(trx, ticketId, true);
  if (!t || t.purpose !== 'step_up' || !(await usableNow(ctx, trx, t))) return undefined;
  const now = await ctx.clock.now(trx, { merchantId: t.merchant_id, environment: t.environment });
  const set = outcome === 'approved'
    ? { status: 'completed' as const, outcome, completed_at: now }
    : { status: 'void' as const, outcome };
  return trx.updateTable('hosted_tickets').set(set).where('id', '=', t.id).returningAll().executeTakeFirstOrThrow();
}

/** The member declines on the screen ("this was not me"): an open challenge becomes void. */
export async function declineStepUp(ctx: ServiceContext, ticketId: string): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => (await settleStepUp(ctx, trx, ticketId, 'declined')) !== undefined);
}
