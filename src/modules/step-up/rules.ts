import { canonicalJson } from '../../platform/writes/request-hash.js';
import { sha256Hex } from '../../platform/ids.js';
import type { Environment } from '../../db/columns.js';
import type { Ticket } from '../hosted-screens/index.js';

/**
 * Strong authentication (step-up), the pure part: which actions can ask for it and how the
 * member's screen names them, what binds a challenge to one request, when a challenge passes,
 * and what a one-time code attempt does. docs/step-up.md.
 */

/**
 * Every action that can ask for step-up, in the member's words: `title` heads the screen,
 * `purpose` finishes "To ..., enter the code we sent you" (and the code's message), `done` is the
 * page after a right code. Plain words, no amounts or addresses (the object is bound by its
 * digest, not shown). A later area adds its line here (e.g. `card.activate`, `card.reveal`,
 * `exchange.create`).
 */
export const stepUpActions = {
  'withdrawal.create': {
    title: 'Confirm your withdrawal',
    purpose: 'confirm a withdrawal from your wallet',
    done: 'Thank you. Go back to the app to finish your withdrawal.',
  },
  'exchange.execute': {
    title: 'Confirm your exchange',
    purpose: 'confirm an exchange between assets in your wallet',
    done: 'Thank you. Go back to the app to finish your exchange.',
  },
  'card.activate': {
    title: 'Confirm card activation',
    purpose: 'activate your new card',
    done: 'Thank you. Go back to the app to finish activating your card.',
  },
} as const satisfies Record<string, { title: string; purpose: string; done: string }>;

export type StepUpAction = keyof typeof stepUpActions;

export function isStepUpAction(value: string): value is StepUpAction {
  return Object.hasOwn(stepUpActions, value);
}

/**
 * The actions whose step-up the operator's per-merchant thresholds decide (`requireStepUp` with
 * `above`). The others decide elsewhere: `exchange.execute` at its direction's
 * `step_up_threshold` (docs/exchange.md), `card.activate` always. A threshold stored for them
 * would be listed as if it applied, and never read.
 */
export const thresholdActions: readonly StepUpAction[] = ['withdrawal.create'];

/** The reference's constants and ours: 6-digit codes, 5 wrong codes void a challenge. */
export const stepUpCodeLength = 6;
export const stepUpAttemptsMax = 5;
/** In the sandbox this code always proves possession (documented for merchants' tests). */
export const sandboxStepUpCode = '000000';
export const stepUpCodeShape = /^[0-9]{6}$/;

/**
 * The object a challenge is bound to: a digest of the action and the fields that make the request
 * what it is (for a withdrawal: asset, network, address, amount in minor units). A challenge passed
 * for one request cannot authorise another; nothing of the request is kept in clear.
 */
export function stepUpObjectRef(action: StepUpAction, fields: Record<string, string | bigint>): string {
  const plain = Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]),
  );
  return sha256Hex(`${action}\n${canonicalJson(plain)}`);
}

/** Whether an amount needs step-up under a threshold (none: never; at or above it: yes). */
export function atOrAboveThreshold(amount: bigint, threshold: bigint | undefined): boolean {
  return threshold !== undefined && amount >= threshold;
}

/** Who asks, for what: what a challenge must be bound to. */
export interface StepUpBinding {
  merchantId: string;
  environment: Environment;
  memberId: string;
  action: StepUpAction;
  objectRef: string;
}

/** Why a presented challenge does not pass (kept for logs and tests; the caller always gets `step_up_required`). */
export type ChallengeRefusal =
  | 'unknown'
  | 'other_merchant'
  | 'other_member'
  | 'other_action'
  | 'other_object'
  | 'not_completed'
  | 'used'
  | 'void'
  | 'expired';

/** A verdict on a challenge: it authorises the request, or why not. */
type Verdict = { pass: true } | { pass: false; reason: ChallengeRefusal };

const refuse = (reason: ChallengeRefusal): Verdict => ({ pass: false, reason });

/** Why `ticket` is not a step-up challenge bound to `binding` (merchant, environment, member, action, object). */
function bindingRefusal(
  ticket: Pick<Ticket, 'merchant_id' | 'environment' | 'member_id' | 'purpose' | 'action' | 'object_ref'>,
  binding: StepUpBinding,
): ChallengeRefusal | undefined {
  if (ticket.purpose !== 'step_up') return 'unknown';
  if (ticket.merchant_id !== binding.merchantId || ticket.environment !== binding.environment) return 'other_merchant';
  if (ticket.member_id !== binding.memberId) return 'other_member';
  if (ticket.action !== binding.action) return 'other_action';
  if (ticket.object_ref !== binding.objectRef) return 'other_object';
  return undefined;
}

/**
 * Pure: does `ticket` authorise `binding` at `now` (the merchant's clock)? Completed with the
 * outcome `approved`, not yet used, unexpired, and bound to the same merchant, environment,
 * member, action and object (extensions 9).
 */
export function challengeVerdict(
  ticket:
    | Pick<
        Ticket,
        | 'merchant_id'
        | 'environment'
        | 'member_id'
        | 'purpose'
        | 'action'
        | 'object_ref'
        | 'status'
        | 'outcome'
        | 'expires_at'
      >
    | undefined,
  binding: StepUpBinding,
  now: Date,
): Verdict {
  if (!ticket) return refuse('unknown');
  const unbound = bindingRefusal(ticket, binding);
  if (unbound) return refuse(unbound);
  if (ticket.status === 'used') return refuse('used');
  if (ticket.status === 'void') return refuse('void');
  if (ticket.status !== 'completed' || ticket.outcome !== 'approved') return refuse('not_completed');
  if (new Date(ticket.expires_at).getTime() <= now.getTime()) return refuse('expired');
  return { pass: true };
}

/**
 * Pure: may `ticket`, which a request already used, authorise that same request's retry? Only
 * for a request whose outcome was lost after the challenge was consumed (card activation: the
 * issuer's 502/504); the caller alone knows the retry is the same request (its idempotency key,
 * body hash and challenge, recorded when the challenge was used) and asks this only then. The
 * challenge must be `used` (not merely completed: that one passes the ordinary way, once) and
 * bound to the same merchant, environment, member, action and object. docs/step-up.md.
 */
export function resumeVerdict(
  ticket:
    | Pick<
        Ticket,
        'merchant_id' | 'environment' | 'member_id' | 'purpose' | 'action' | 'object_ref' | 'status' | 'outcome'
      >
    | undefined,
  binding: StepUpBinding,
): Verdict {
  if (!ticket) return refuse('unknown');
  const unbound = bindingRefusal(ticket, binding);
  if (unbound) return refuse(unbound);
  if (ticket.status !== 'used' || ticket.outcome !== 'approved') return refuse('not_completed');
  return { pass: true };
}

/** What one code entered on the screen does to an open challenge. */
export type CodeDecision =
  | { kind: 'approve' }
  | { kind: 'wrong'; failedAttempts: number; attemptsLeft: number }
  /** The last allowed wrong code: the challenge becomes void. */
  | { kind: 'exhausted'; failedAttempts: number };

/** Pure: a right code approves; a wrong one counts, and the `stepUpAttemptsMax`-th voids the challenge. */
export function decideCode(matches: boolean, failedAttemptsBefore: number): CodeDecision {
  if (matches) return { kind: 'approve' };
  const failedAttempts = failedAttemptsBefore + 1;
  if (failedAttempts >= stepUpAttemptsMax) return { kind: 'exhausted', failedAttempts };
  return { kind: 'wrong', failedAttempts, attemptsLeft: stepUpAttemptsMax - failedAttempts };
}

/** The outcome a voided challenge records when its wrong codes ran out (`declined` is the member's or the sandbox's
 * refusal). */
export const exhaustedOutcome = 'attempts_exhausted';
