/**
 * Closing and expiry of cards (docs/cards.md, "Replacement, closing and expiry"). The member
 * closes a card: `closing` at once (nothing spends any more), `closed` when the issuer confirms
 * the cancellation, and only then is its balance returned to available; an issuer that does not
 * answer leaves the card `closing` (reconciled by asking again with the same request id); an issuer
 * that refuses puts it back. Cards past their expiry month become `expired` by the clock, their
 * balance returned.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClockScope } from '../../../platform/clock.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf, type CallOutcome } from '../../../upstreams/port.js';
import { returnCardBalance } from '../shared/balance-return.js';
import { emitCardStatus } from '../shared/events.js';
import { alertUnknownStatus } from '../controls/issuer-calls.js';
import { cardOrNotFound, lockCardById, updateCard } from '../cards/queries.js';
import type { MemberCardCaller } from '../shared/queries.js';
import { inFlightReplacement, replacementUnderWay } from '../replacements/queries.js';
import { claimClosingCheck, dueClosingCardIds, expiredCardIds } from './queries.js';
import { cardReferenceTypeOfCard } from '../shared/rules.js';
import { closeOutcomeTransition, closeVerdict, expiryDue } from './state.js';
import type { CardRow } from '../cards/tables.js';
import { replacementRetryDelaySeconds } from '../replacements/executor.js';
import { failPendingTopUps } from '../topups/dispatch.js';
import { statusMove } from '../../../db/status-move.js';
import { rowScope } from '../../../db/owned-by.js';

export const closingErrors = {
  close: ['state_invalid', 'not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** How long the key of a close is held while the issuer is asked. */
export const closeLeaseMs = 60_000;
/** A closing card whose call never came back is asked about after this long (merchant clock). */
const closeFirstCheckSeconds = 60;
/** While a reconciliation asks the issuer, the card's next check is pushed out by this much (merchant clock). */
const closeCheckLeaseSeconds = 300;
/** Cards handled per run of a timed process (a bound on one batch). */
const batchMax = 100;

export type ClosePrepared =
  { kind: 'answer'; id: string; status: 'closing' | 'closed' } | { kind: 'ask'; card: CardRow };

/** Step 1 of `POST /v1/cards/{id}/close`, committed with the key's claim: the state machine, then `closing` with its
 * event. */
export async function prepareClose(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
): Promise<ClosePrepared> {
  const card = await cardOrNotFound(trx, caller, id, true);
  const verdict = closeVerdict({
    status: card.status,
    inFlightReplacement: (await inFlightReplacement(trx, card.id)) !== undefined,
  });
  if (verdict.kind === 'refuse') throw new ApiError(verdict.code, verdict.reason);
  if (verdict.kind === 'replay') return { kind: 'answer', id: card.id, status: verdict.at as 'closing' | 'closed' };
  const now = await ctx.clock.now(trx, caller);
  const updated = await updateCard(trx, card.id, {
    ...statusMove(card, 'closing', now),
    closing_from: card.status as 'unactivated' | 'active',
    close_outcome: 'pending',
    close_checks: 0,
    close_next_check_at: new Date(now.getTime() + closeFirstCheckSeconds * 1000),
  });
  await emitCardStatus(trx, updated);
  // Nothing more is loaded onto a closing card: top-ups not yet sent to the issuer fail, their freeze back.
  await failPendingTopUps(trx, card.id, 'card_closing');
  return { kind: 'ask', card: updated };
}

/** Step 2: the issuer is asked to cancel the card; its answer is applied. A refusal answers `state_invalid` (the card
 * is back as it was). */
export async function finishClose(ctx: ServiceContext, card: CardRow) {
  const outcome = await askIssuer(ctx, card);
  const after = await applyCloseAnswer(ctx, card, outcome);
  if (after.status !== 'closing' && after.status !== 'closed')
    throw new ApiError('state_invalid', 'The card issuer refused to close the card.');
  return { id: card.id, status: after.status as 'closing' | 'closed' };
}

function askIssuer(ctx: ServiceContext, card: CardRow) {
  return withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.cancelCard(rowScope(card), {
      requestId: `close:${card.id}`,
      cardRef: card.upstream_ref,
      reason: 'closed',
    }),
  );
}

/**
 * Applies the issuer's answer to a `closing` card in one transaction: confirmed → `closed` and the
 * balance returned (once: keyed `<card>:close`); refused → back to the status it was closed from;
 * no answer → stays `closing`, asked again after a backoff on the merchant's clock.
 */
async function applyCloseAnswer(
  ctx: ServiceContext,
  card: CardRow,
  outcome: CallOutcome | { kind: 'timeout' },
): Promise<CardRow> {
  const cardId = card.id;
  // A status outside our enumeration is no confirmation (stays closing, asked again) and one alert for the card.
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) === undefined)
    await alertUnknownStatus(ctx, card, 'closing', outcome.status);
  return ctx.db.transaction().execute(async (trx) => {
    const card = await lockCardById(trx, cardId);
    const now = await ctx.clock.now(trx, rowScope(card));
    const answer =
      outcome.kind === 'rejected'
        ? 'refused'
        : outcome.kind === 'accepted' && outcome.status === 'succeeded'
          ? 'confirmed'
          : undefined;
    if (!answer) {
      if (card.status !== 'closing') return card;
      const checks = card.close_checks + 1;
      return updateCard(trx, card.id, {
        close_outcome: outcome.kind === 'timeout' ? 'timeout' : 'unknown',
        close_checks: checks,
        close_next_check_at: new Date(now.getTime() + replacementRetryDelaySeconds(checks) * 1000),
        updated_at: now,
      });
    }
    const verdict = closeOutcomeTransition(card.status, answer, card.closing_from);
    if (verdict.kind !== 'move') return card;
    const updated = await updateCard(trx, card.id, {
      ...statusMove(card, verdict.to, now),
      closing_from: null,
      close_outcome: null,
      close_next_check_at: null,
    });
    if (verdict.to === 'closed')
      await returnCardBalance(trx, updated, { type: cardReferenceTypeOfCard, id: `${card.id}:close` }, now);
    await emitCardStatus(trx, updated);
    return updated;
  });
}

/** Asks the issuer again about each due closing card (claimed by pushing its next check out, so two runs never ask at
 * once). */
export async function reconcileClosingCards(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  const due = await dueClosingCardIds(ctx.db, scope, now, batchMax);
  for (const { id } of due) {
    const claimed = await claimClosingCheck(ctx.db, id, now, new Date(now.getTime() + closeCheckLeaseSeconds * 1000));
    if (!claimed) continue;
    await applyCloseAnswer(ctx, claimed, await askIssuer(ctx, claimed));
  }
}

/** Cards past their expiry month become `expired`, their balance returned (once: keyed `<card>:expiry`), with
 * `card.expired`. */
export async function expireCards(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  const due = await expiredCardIds(ctx.db, scope, now, batchMax);
  for (const { id } of due) {
    await ctx.db.transaction().execute(async (trx) => {
      const card = await lockCardById(trx, id);
      if (!expiryDue({ status: card.status, expMonth: card.exp_month, expYear: card.exp_year }, now)) return;
      const underWay = await replacementUnderWay(trx, id);
      if (underWay) return;
      const updated = await updateCard(trx, id, statusMove(card, 'expired', now));
      await returnCardBalance(trx, updated, { type: cardReferenceTypeOfCard, id: `${id}:expiry` }, now);
      await emitCardStatus(trx, updated);
      await failPendingTopUps(trx, id, 'card_expired');
    });
  }
}
