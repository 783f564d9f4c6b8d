/**
 * The card record (`GET /v1/cards/{id}`, `GET /v1/cards`), physical-card activation and the
 * sandbox shipping helper (docs/cards.md). The PIN passes through `finishActivation` to the issuer
 * and is never stored, logged or put in an error.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { requireStepUp, type StepUpCall, stepUpObjectRef } from '../../step-up/index.js';
import { emitCardStatus } from '../shared/events.js';
import { cardOrNotFound, cardsQuery, findCard, setCard, updateCard } from './queries.js';
import { type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import {
  activationResumeDecision,
  activationResumeSeconds,
  afterActivationFailure,
  activationVerdict,
  isLocked,
} from './state.js';
import { sha256Hex } from '../../../platform/ids.js';
import type { CardRow } from './tables.js';
import { cardView } from './views.js';
import { statusMove } from '../../../db/status-move.js';
import { rowScope } from '../../../db/owned-by.js';

export const cardErrors = {
  get: ['not_found'],
  activate: [
    'state_invalid',
    'product_not_available',
    'invalid_request',
    'not_found',
    'upstream_error',
    'upstream_timeout',
  ],
  ship: ['not_found', 'state_invalid'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export const activationLeaseMs = 60_000;

export async function getCard(db: Db, caller: CardCaller, id: string) {
  const card = await cardOrNotFound(db, caller, id);
  return cardView(db, card);
}

export async function listCards(db: Db, caller: MemberCardCaller, page: PageParams) {
  return viewPage(await keysetPage(cardsQuery(db, caller), page), (row) => cardView(db, row));
}

/**
 * What a retry must match to reuse the step-up challenge its first attempt consumed: a digest of
 * the idempotency key, the body's hash (the PIN enters it only as a keyed digest,
 * `secretBodyFields`) and the challenge. Nothing of it is in clear or reversible to the PIN.
 */
export interface ActivationAttempt {
  key: string;
  requestHash: string;
}

const attemptRef = (attempt: ActivationAttempt, challengeId: string) =>
  sha256Hex(`card.activate\n${attempt.key}\n${attempt.requestHash}\n${challengeId}`);

export type Prepared = { kind: 'already'; id: string } | { kind: 'ask'; card: CardRow; resumed: boolean };

const lockedError = (lockedUntil: Date) =>
  new ApiError('state_invalid', 'The card is locked after too many failed activations.', {
    locked_until: lockedUntil.toISOString(),
  });

/**
 * Activation, step 1 (committed with the key's claim): the card is checked by the state machine
 * and the step-up challenge bound to the member and this card is consumed. A repeat on an active
 * card answers at once: no step-up, nothing counted.
 *
 * The attempt is recorded on the card (`activation_attempt_ref`) until the issuer answers. When
 * that answer is lost (504/502), the retry of the same request (same key, same body, the same
 * challenge in `x-step-up`) within `activationResumeSeconds` of real time (the idempotency window,
 * which the sandbox clock does not move) passes with the challenge it already consumed (`resumed`);
 * any other request needs a new challenge. docs/cards.md.
 */
export async function prepareActivation(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
  stepUp: StepUpCall,
  attempt: ActivationAttempt,
): Promise<Prepared> {
  const card = await cardOrNotFound(trx, caller, id, true);
  const now = await ctx.clock.now(trx, caller);
  const verdict = activationVerdict(
    {
      status: card.status,
      formFactor: card.form_factor,
      inventory: card.inventory_status,
      lockedUntil: card.locked_until,
    },
    now,
  );
  if (verdict.kind === 'replay') return { kind: 'already', id: card.id };
  if (verdict.kind === 'refuse') {
    if (card.locked_until && isLocked(card.locked_until, now)) throw lockedError(card.locked_until);
    throw new ApiError(verdict.code, verdict.reason);
  }
  const presented = stepUp.header;
  // The resume window is the idempotency window: real time, never the sandbox clock (extensions 8),
  // so `activation_attempt_at` is stamped and compared on real time.
  const realNow = ctx.clock.real();
  const resumable =
    presented !== undefined &&
    card.activation_attempt_ref === attemptRef(attempt, presented) &&
    card.activation_attempt_at !== null &&
    realNow.getTime() - new Date(card.activation_attempt_at).getTime() < activationResumeSeconds * 1000;
  await requireStepUp(ctx, trx, {
    principal: caller,
    action: 'card.activate',
    objectRef: stepUpObjectRef('card.activate', { card: card.id }),
    call: stepUp,
    resume: resumable ? presented : undefined,
  });
  // Passed, so a challenge was presented: this attempt is the card's open one until the issuer answers.
  const updated = await updateCard(trx, card.id, {
    activation_attempt_ref: attemptRef(attempt, presented!),
    activation_attempt_at: resumable ? card.activation_attempt_at : realNow,
  });
  return { kind: 'ask', card: updated, resumed: resumable };
}

/**
 * Activation, step 2: the issuer checks the expiry and the PIN. A match activates the card; a
 * mismatch or an explicit refusal is counted (the third locks the card for 24 hours on the
 * merchant's clock); a timeout or 5xx is not counted and answers 504 / 502.
 */
export async function finishActivation(
  ctx: ServiceContext,
  card: CardRow,
  elements: { expiry: string; pin: string },
  resumed = false,
) {
  const call = rowScope(card);
  const ask = () =>
    withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
      ctx.upstreams.card.activate(call, { cardRef: card.upstream_ref, expiry: elements.expiry, pin: elements.pin }),
    );
  let outcome: Awaited<ReturnType<typeof ask>>;
  if (resumed) {
    // The retry of an attempt whose answer was lost: the issuer's state first, so that an
    // activation it already made is taken as done rather than checked (and perhaps counted) again.
    const known = activationResumeDecision(
      await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
        ctx.upstreams.card.activationStatus(call, card.upstream_ref),
      ),
    );
    if (known.kind === 'unknown')
      outcome = known.timeout ? { kind: 'timeout' } : { kind: 'unknown', reason: 'activation status unknown' };
    else outcome = known.kind === 'activated' ? { kind: 'activated' } : await ask();
  } else {
    outcome = await ask();
  }
  if (outcome.kind === 'timeout')
    throw new ApiError(
      'upstream_timeout',
      'The card issuer did not answer; retry with the same key, body and x-step-up.',
    );
  if (outcome.kind === 'unknown')
    throw new ApiError(
      'upstream_error',
      'The card issuer could not be asked; retry with the same key, body and x-step-up.',
    );
  const result = await ctx.db.transaction().execute(async (trx) => {
    const locked = (await findCard(trx, call, card.id, true))!;
    if (locked.status === 'active') return { ok: true as const };
    // The issuer was asked outside any transaction: a close, the expiry or a replacement may have
    // ended the card meanwhile. Its answer never brings such a card back, nor counts against it.
    if (locked.status !== 'unactivated' || locked.inventory_status === 'voided')
      return { ok: false as const, endedAs: locked.inventory_status === 'voided' ? 'being replaced' : locked.status };
    const now = await ctx.clock.now(trx, call);
    if (outcome.kind === 'activated') {
      const updated = await updateCard(trx, card.id, {
        ...statusMove(locked, 'active', now),
        inventory_status: 'bound',
        activation_failures: 0,
        locked_until: null,
        activated_at: now,
        activation_attempt_ref: null,
        activation_attempt_at: null,
      });
      await emitCardStatus(trx, updated);
      return { ok: true as const };
    }
    const next = afterActivationFailure(locked.activation_failures, now, locked.locked_until);
    await setCard(trx, card.id, {
      activation_failures: next.failures,
      locked_until: next.lockedUntil,
      activation_attempt_ref: null,
      activation_attempt_at: null,
      updated_at: now,
    });
    return { ok: false as const, lockedUntil: next.lockedUntil };
  });
  if (result.ok) return { id: card.id, status: 'active' as const };
  if ('endedAs' in result)
    throw new ApiError(
      'state_invalid',
      `The card changed while the issuer was asked (it is now ${result.endedAs}); it cannot be activated.`,
    );
  if (result.lockedUntil) throw lockedError(result.lockedUntil);
  throw new ApiError('invalid_request', 'The expiry or the PIN does not match the card.');
}

/** Sandbox: `POST /v1/sandbox/cards/{id}/ship` (extensions 8): a physical card's inventory row becomes shipped. */
export async function sandboxShip(ctx: ServiceContext, caller: CardCaller, id: string) {
  return ctx.db.transaction().execute(async (trx) => {
    const card = await cardOrNotFound(trx, caller, id, true);
    if (card.form_factor !== 'physical') throw new ApiError('state_invalid', 'Only physical cards are shipped.');
    if (card.inventory_status === 'in_production') {
      const now = await ctx.clock.now(trx, caller);
      const updated = await updateCard(trx, card.id, { inventory_status: 'shipped', updated_at: now });
      return cardView(trx, updated);
    }
    if (card.inventory_status === 'voided') throw new ApiError('state_invalid', "The card's inventory row is void.");
    return cardView(trx, card);
  });
}
