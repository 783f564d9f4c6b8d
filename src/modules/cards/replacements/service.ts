/**
 * Card replacement requests (reference: `POST /v1/cards/{id}/replacements`; docs/cards.md,
 * "Replacement, closing and expiry"): creating one moves no money and calls no upstream; the
 * executor (executor.ts) carries it out later on the merchant's clock. Reads: one
 * replacement, and a card's replacements.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { enqueue } from '../../../jobs/queries.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { formatStored } from '../../../money/index.js';
import { emitReplacement } from '../shared/events.js';
import { cardOrNotFound, cardCurrencyOf, freezeCard } from '../cards/queries.js';
import { type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import { findReplacement, inFlightReplacement, insertReplacement, replacementsQuery } from './queries.js';
import { replacementRequestVerdict, truncateNote } from './state.js';
import type { CardReplacementRow } from './tables.js';
import { isoOrNull } from '../../../platform/dates.js';
import { assetScale } from '../../assets/index.js';

export const replacementErrors = {
  create: ['state_invalid', 'invalid_request', 'not_found'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** The executor takes a request this long after it was made, on the merchant's clock (a window in which it is seen
 * `requested`). */
export const replacementExecuteDelaySeconds = 60;
export const replacementJobKind = 'card.replacement_execute';
/** The job's attempts (each deferral counts); the timed process and the ticker take over past them. */
export const replacementJobAttemptsMax = 50;

/**
 * `POST /v1/cards/{id}/replacements`: the card (locked) and its in-flight replacement are checked
 * by the state machine; the request is stored `requested` with its job. Two concurrent requests
 * for one card: the card row lock orders them, and the partial unique index
 * `card_replacements_in_flight` is the backstop (the loser is `state_invalid`).
 */
export async function createReplacement(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: MemberCardCaller,
  cardId: string,
  body: { reason: string; note?: string },
) {
  const card = await cardOrNotFound(trx, caller, cardId, true);
  const verdict = replacementRequestVerdict(
    { status: card.status, inFlight: (await inFlightReplacement(trx, card.id)) !== undefined },
    body.reason,
  );
  if (verdict.kind === 'refuse') throw new ApiError(verdict.code, verdict.reason);
  const now = await ctx.clock.now(trx, caller);
  const nextRunAt = new Date(now.getTime() + replacementExecuteDelaySeconds * 1000);
  const row = await insertReplacement(trx, {
    id: newId('crp'),
    merchant_id: card.merchant_id,
    environment: card.environment,
    member_id: card.member_id,
    card_id: card.id,
    reason: body.reason as CardReplacementRow['reason'],
    security: verdict.security,
    note: truncateNote(body.note),
    status: 'requested',
    status_version: 1,
    fee_asset: null,
    inventory_before: null,
    new_card_ref: null,
    new_card_last4: null,
    new_card_exp_month: null,
    new_card_exp_year: null,
    new_card_id: null,
    failure_reason: null,
    next_run_at: nextRunAt,
    lease_until: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  });
  if (!row) throw new ApiError('state_invalid', 'The card already has a replacement in flight.');
  // A security reason (stolen, number leaked, ...) stops the card at once, in the request's own
  // transaction: the executor runs a minute later, and a stolen card must not spend meanwhile.
  if (verdict.security) await freezeCard(trx, card.id, card.frozen_at ?? now, now);
  await enqueue(trx, {
    kind: replacementJobKind,
    payload: { replacement_id: row.id },
    runAt: nextRunAt,
    clock: caller,
    dedupeKey: `${replacementJobKind}:${row.id}`,
    maxAttempts: replacementJobAttemptsMax,
  });
  await emitReplacement(trx, row);
  return { id: row.id, status: 'requested' as const };
}

export async function getReplacement(db: Db, caller: CardCaller, id: string) {
  const row = await findReplacement(db, caller, id);
  if (!row) throw new ApiError('not_found', 'No such card replacement.');
  return replacementView(db, row);
}

/**
 * `GET /v1/cards/replacements`: newest first (cursor); on behalf of a member only its own, for
 * the merchant all of its members'; `card_id` narrows it to one card (an unknown card: empty).
 */
export async function listReplacements(db: Db, caller: CardCaller, page: PageParams & { card_id?: string }) {
  return viewPage(await keysetPage(replacementsQuery(db, caller, page.card_id), page), (row) =>
    replacementView(db, row),
  );
}

/** The full replacement record: fees in the asset they were taken in (null before the executor reserved them), the
 * returned balance in the card currency. */
export async function replacementView(db: Db, r: CardReplacementRow) {
  const card = await cardCurrencyOf(db, r.card_id);
  const feeScale = r.fee_asset ? await assetScale(db, r.fee_asset) : 0;
  return {
    id: r.id,
    status: r.status,
    status_version: r.status_version,
    card_id: r.card_id,
    reason: r.reason,
    security: r.security,
    note: r.note,
    fees:
      r.fee_asset === null
        ? null
        : {
            asset: r.fee_asset,
            replacement: formatStored(r.replacement_fee, feeScale),
            postage: formatStored(r.postage_fee, feeScale),
          },
    returned_amount: formatStored(r.returned_amount, await assetScale(db, card.currency)),
    new_card_id: r.new_card_id,
    failure_reason: r.failure_reason,
    created_at: isoOrNull(r.created_at)!,
    completed_at: isoOrNull(r.completed_at),
  };
}
