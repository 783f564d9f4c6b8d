/**
 * Closing and expiry of cards (docs/cards.md, "Replacement, closing and expiry"). The member
 * closes a card: `closing` at once (nothing spends any more), `closed` when the issuer confirms
 * the cancellation, and only then is its balance returned to available; an issuer that does not
 * answer leaves the card `closing` (reconciled by asking again with the same request id); an issuer
 * that refuses puts it back. Cards past their expiry month become `expired` by the clock, their
 * balance returned.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClockScope } from '../../../platform/clock.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf, type CallOutcome } from '../../../upstreams/port.js';
import { emitCardStatus, returnCardBalance } from '../shared/balance-return.js';
import { alertUnknownStatus } from '../controls/service.js';
import { findCard } from '../cards/queries.js';
import { type Db, type MemberCardCaller } from '../shared/queries.js';
import { inFlightReplacement } from '../replacements/service.js';
import { cardReferenceTypeOfCard } from '../shared/rules.js';
import { closeOutcomeTransition, closeVerdict, expiryDue } from './state.js';
import type { CardRow } from '../cards/tables.js';
import { replacementRetryDelaySeconds } from '../replacements/executor.js';
import { failPendingTopUps } from '../topups/dispatch.js';

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

const callOf = (c: CardRow) => ({ merchantId: c.merchant_id, environment: c.environment });

/** Step 1 of `POST /v1/cards/{id}/close`, committed with the key's claim: the state machine, then `closing` with its
 * event. */
export async function prepareClose(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  id: string,
): Promise<ClosePrepared> {
  const card = await findCard(trx, caller, id, true);
  if (!card) throw new ApiError('not_found', 'No such card.');
  const verdict = closeVerdict({
    status: card.status,
    inFlightReplacement: (await inFlightReplacement(trx, card.id)) !== undefined,
  });
  if (verdict.kind === 'refuse') throw new ApiError(verdict.code, verdict.reason);
  if (verdict.kind === 'replay') return { kind: 'answer', id: card.id, status: verdict.at as 'closing' | 'closed' };
  const now = await ctx.clock.now(trx, caller);
  const updated = await trx
    .updateTable('cards')
    .set({
      status: 'closing',
      status_version: card.status_version + 1,
      closing_from: card.status as 'unactivated' | 'active',
      close_outcome: 'pending',
      close_checks: 0,
      close_next_check_at: new Date(now.getTime() + closeFirstCheckSeconds * 1000),
      updated_at: now,
    })
    .where('id', '=', card.id)
    .returningAll()
    .executeTakeFirstOrThrow();
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
    ctx.upstreams.card.cancelCard(callOf(card), {
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
    const card = await trx
      .selectFrom('cards')
      .selectAll()
      .where('id', '=', cardId)
      .forNoKeyUpdate()
      .executeTakeFirstOrThrow();
    const now = await ctx.clock.now(trx, callOf(card));
    const answer =
      outcome.kind === 'rejected'
        ? 'refused'
        : outcome.kind === 'accepted' && outcome.status === 'succeeded'
          ? 'confirmed'
          : undefined;
    if (!answer) {
      if (card.status !== 'closing') return card;
      const checks = card.close_checks + 1;
      return trx
        .updateTable('cards')
        .set({
          close_outcome: outcome.kind === 'timeout' ? 'timeout' : 'unknown',
          close_checks: checks,
          close_next_check_at: new Date(now.getTime() + replacementRetryDelaySeconds(checks) * 1000),
          updated_at: now,
        })
        .where('id', '=', card.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const verdict = closeOutcomeTransition(card.status, answer, card.closing_from);
    if (verdict.kind !== 'move') return card;
    const updated = await trx
      .updateTable('cards')
      .set({
        status: verdict.to,
        status_version: card.status_version + 1,
        closing_from: null,
        close_outcome: null,
        close_next_check_at: null,
        updated_at: now,
      })
      .where('id', '=', card.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (verdict.to === 'closed')
      await returnCardBalance(trx, updated, { type: cardReferenceTypeOfCard, id: `${card.id}:close` }, now);
    await emitCardStatus(trx, updated);
    return updated;
  });
}

/** Timed process `card.closing_reconcile`: the earliest next check of the scope's closing cards. */
export async function nextClosingCheck(db: Db, scope: ClockScope): Promise<Date | null> {
  const row = await db
    .selectFrom('cards')
    .select(sql<Date | null>`min(close_next_check_at)`.as('due'))
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .where('status', '=', 'closing')
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** Asks the issuer again about each due closing card (claimed by pushing its next check out, so two runs never ask at
 * once). */
export async function reconcileClosingCards(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  const due = await ctx.db
    .selectFrom('cards')
    .select('id')
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .where('status', '=', 'closing')
    .where('close_next_check_at', '<=', now)
    .orderBy('close_next_check_at')
    .limit(batchMax)
    .execute();
  for (const { id } of due) {
    const claimed = await ctx.db
      .updateTable('cards')
      .set({ close_next_check_at: new Date(now.getTime() + closeCheckLeaseSeconds * 1000) })
      .where('id', '=', id)
      .where('status', '=', 'closing')
      .where('close_next_check_at', '<=', now)
      .returningAll()
      .executeTakeFirst();
    if (!claimed) continue;
    await applyCloseAnswer(ctx, claimed, await askIssuer(ctx, claimed));
  }
}

/** The first instant after a card's expiry month, as SQL (UTC). */
const expiresAtSql = sql<Date>`make_timestamptz(cards.exp_year, cards.exp_month, 1, 0, 0, 0, 'UTC') + interval
  '1 month'`;
const noReplacementUnderWay = sql<boolean>`NOT EXISTS (SELECT 1 FROM card_replacements r WHERE r.card_id = cards.id
  AND r.status = 'processing')`;

function expiringCards(db: Db, scope: ClockScope) {
  return db
    .selectFrom('cards')
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .where('status', 'in', ['unactivated', 'active'])
    .where(noReplacementUnderWay);
}

/** Timed process `card.expiry`: the earliest expiry of the scope's cards that can expire (none under a replacement in
 * progress, which ends them itself). */
export async function nextExpiry(db: Db, scope: ClockScope): Promise<Date | null> {
  const row = await expiringCards(db, scope)
    .select(sql<Date | null>`min(${expiresAtSql})`.as('due'))
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** Cards past their expiry month become `expired`, their balance returned (once: keyed `<card>:expiry`), with
 * `card.expired`. */
export async function expireCards(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void> {
  const due = await expiringCards(ctx.db, scope)
    .select('id')
    .where(expiresAtSql, '<=', now)
    .orderBy('seq')
    .limit(batchMax)
    .execute();
  for (const { id } of due) {
    await ctx.db.transaction().execute(async (trx) => {
      const card = await trx
        .selectFrom('cards')
        .selectAll()
        .where('id', '=', id)
        .forNoKeyUpdate()
        .executeTakeFirstOrThrow();
      if (!expiryDue({ status: card.status, expMonth: card.exp_month, expYear: card.exp_year }, now)) return;
      const underWay = await trx
        .selectFrom('card_replacements')
        .select('id')
        .where('card_id', '=', id)
        .where('status', '=', 'processing')
        .executeTakeFirst();
      if (underWay) return;
      const updated = await trx
        .updateTable('cards')
        .set({ status: 'expired', status_version: card.status_version + 1, updated_at: now })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await returnCardBalance(trx, updated, { type: cardReferenceTypeOfCard, id: `${id}:expiry` }, now);
      await emitCardStatus(trx, updated);
      await failPendingTopUps(trx, id, 'card_expired');
    });
  }
}
