import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Database, Db, Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { ErrorCode } from '../../platform/errors.js';
import { SameKeyRefusal } from '../../platform/writes/same-key-refusal.js';
import { writeAlone, type WriteMode } from '../../platform/writes/write-batch.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { findTicket, hostedOrigin, issueTicket, ticketTtlSeconds, ticketView } from '../hosted-screens/index.js';
import { hashStepUpCode, newStepUpCode } from './code.js';
import { findThreshold, findThresholds, markChallengeUsed, thresholdKey } from './queries.js';
import {
  atOrAboveThreshold,
  challengeVerdict,
  resumeVerdict,
  stepUpActions,
  type StepUpAction,
  type StepUpBinding,
} from './rules.js';

/**
 * The step-up gate (docs/step-up.md). An action that needs strong authentication calls
 * `requireStepUp` inside its write's transaction, before it changes anything:
 *
 *   write(async (trx) => {
 *     ...validate the request...
 *     await requireStepUp(ctx, trx, {
 *       principal,                                   // the member the call acts for
 *       action: 'withdrawal.create',                 // a line of stepUpActions
 *       objectRef: stepUpObjectRef('withdrawal.create', { asset, network, address, amount }),
 *       call: stepUpCall(req),                       // x-step-up and the base URL the screen is served on
 *       above: { asset, amount },                    // optional: only at or above the operator's threshold
 *     });
 *     ...the effect...
 *   })
 *
 * and lists `stepUpErrors` in its route's `errors` (the OpenAPI document then shows `x-step-up`).
 * It passes, consuming the presented challenge (`used`, in the same transaction: a refusal later
 * in the effect rolls the consumption back with everything else), or throws 400
 * `step_up_required` with a NEW challenge: that refusal is a `SameKeyRefusal`, so the effect is
 * rolled back, the challenge row commits, the key keeps no result (the repeat with the same key
 * and body runs anew), and the one-time code is sent once the challenge is committed.
 */

export const stepUpErrors = ['step_up_required'] as const satisfies readonly ErrorCode[];

/** What the gate reads from the request: the `x-step-up` header and the origin the screen is served on (configured:
 * `hostedOrigin`). */
export interface StepUpCall {
  header: string | undefined;
  origin: string;
}

export function stepUpCall(req: FastifyRequest): StepUpCall {
  const header = req.headers['x-step-up'];
  return { header: typeof header === 'string' ? header.trim() : undefined, origin: hostedOrigin(req) };
}

export interface StepUpDemand {
  principal: { merchantId: string; environment: Environment; memberId: string };
  action: StepUpAction;
  /** `stepUpObjectRef(action, fields)`: the request the challenge authorises. */
  objectRef: string;
  call: StepUpCall;
  /** Step-up only when `amount` (minor units of `asset`) is at or above the operator's threshold for the action;
   * without it, always. */
  above?: { asset: string; amount: bigint };
  /**
   * The challenge this very request consumed before its outcome was lost (the caller has checked
   * that it is the same request: key, body hash and challenge). Presented again in `x-step-up`, it
   * passes without being consumed a second time (`resumeVerdict`); any other request still needs
   * an unused one. docs/step-up.md, "A retry after an unknown outcome".
   */
  resume?: string;
}

/** Passes (consuming the presented challenge) or throws `step_up_required` with a new challenge. */
export async function requireStepUp(ctx: ServiceContext, trx: Transaction<Database>, d: StepUpDemand): Promise<void> {
  const { merchantId, environment, memberId } = d.principal;
  if (d.above) {
    const threshold = await findThreshold(trx, { merchantId, environment }, d.action, d.above.asset);
    if (!atOrAboveThreshold(d.above.amount, threshold)) return;
  }
  if (d.call.header) {
    const binding: StepUpBinding = { merchantId, environment, memberId, action: d.action, objectRef: d.objectRef };
    const ticket = await findTicket(trx, d.call.header, true);
    if (d.resume !== undefined && d.resume === d.call.header && resumeVerdict(ticket, binding).pass) return;
    const now = await ctx.clock.now(trx, { merchantId, environment });
    const verdict = challengeVerdict(ticket, binding, now);
    if (verdict.pass && (await markChallengeUsed(trx, ticket!.id, now))) return;
  }
  throw await challengeRefusal(ctx, d);
}

/**
 * Which of many demands with `above` reach their operator's threshold (one statement): a batch of
 * writes learns which of its items need the gate before any of them writes. A demand that does
 * is then passed to `requireStepUp` without `above`.
 */
export async function stepUpNeeded(
  db: Db,
  demands: readonly (StepUpDemand['principal'] & { action: StepUpAction; asset: string; amount: bigint })[],
): Promise<boolean[]> {
  const thresholds = await findThresholds(db, demands);
  return demands.map((d) =>
    atOrAboveThreshold(d.amount, thresholds.get(thresholdKey(d.merchantId, d.environment, d.action, d.asset))),
  );
}

/**
 * The gate for an item of a batch effect (docs/write-model.md) that reached its threshold: it
 * consumes a challenge before the item's posting may still refuse it, so in a batch the item is
 * written alone (`writeAlone`); alone (behind its savepoint) the gate runs: 'passed', or its
 * refusal. `demand` has no `above`: the caller knows the threshold is reached (`stepUpNeeded`).
 */
export async function stepUpInBatch(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  mode: WriteMode,
  demand: StepUpDemand,
): Promise<'passed' | typeof writeAlone | Error> {
  if (!mode.alone) return writeAlone;
  try {
    await requireStepUp(ctx, trx, demand);
    return 'passed';
  } catch (err) {
    return err as Error;
  }
}

/**
 * `step_up_required` with a new challenge: the row (with the code's hash) is written where the
 * write's idempotency handling says (`SameKeyRefusal.persist`), the code is sent after commit.
 */
async function challengeRefusal(ctx: ServiceContext, d: StepUpDemand): Promise<SameKeyRefusal> {
  const { merchantId, environment, memberId } = d.principal;
  const code = newStepUpCode();
  const secretHash = await hashStepUpCode(code);
  let challengeId: string | undefined;
  return new SameKeyRefusal(
    'step_up_required',
    'Strong authentication is required: send the member to hosted_url, then repeat this request with ' +
      'x-step-up: <challenge_id> and the same idempotency key.',
    {
      persist: async (trx) => {
        const ticket = await issueTicket(ctx, trx, {
          merchantId,
          environment,
          memberId,
          purpose: 'step_up',
          origin: d.call.origin,
          action: d.action,
          objectRef: d.objectRef,
          secretHash,
        });
        challengeId = ticket.id;
        const view = ticketView(ticket);
        return { challenge_id: view.id, hosted_url: view.hosted_url, expires_at: view.expires_at };
      },
      afterCommit: async () => {
        const reference = challengeId!;
        const sent = await withDeadline(ctx.config.upstreamCallTimeoutMs, async () => {
          await ctx.upstreams.notifier.sendCode(
            { merchantId, environment },
            {
              memberId,
              reference,
              code,
              purpose: stepUpActions[d.action].purpose,
              expiresInSeconds: ticketTtlSeconds.step_up,
            },
          );
          return { kind: 'sent' as const };
        });
        // The challenge stands without its code; the member cannot complete it, and the merchant's
        // repeated request (not completed) gets a new challenge and a new code.
        if (sent.kind !== 'sent')
          ctx.log.warn({ challengeId: reference, outcome: sent.kind }, 'step-up: the one-time code could not be sent');
      },
    },
  );
}
