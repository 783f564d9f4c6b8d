/**
 * The issuer's decisions applied to an application (docs/cards.md): approved (the card opened,
 * the opening fee charged), rejected (the fee refunded), need_docs (a supplement work order), the
 * supplement's expiry (failed, fee refunded) and its submission (back to review); each checked by
 * the state machine (state.ts), with its event.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import {
  minorFromDb,
  postRowEntry,
  type EntryLine,
  cardEntryKinds,
  feeChargeLines,
  feeRefundLines,
} from '../../../money/index.js';
import type { ApplicationDecision, IssuedCard } from '../../../upstreams/card/port.js';
import { minKycLevel } from '../../kyc/index.js';
import { productBySeq } from '../products/queries.js';
import { type Db, type MemberCardCaller } from '../shared/queries.js';
import { emitCardEvent, emitCardStatus } from '../shared/events.js';
import { openCard } from '../cards/opening.js';
import { kycLevelOf, updateApplication } from './queries.js';
import { cardReferenceType } from './rules.js';
import { applicationTransition, supplementOpen, type ApplicationEvent } from './state.js';
import type { CardApplicationRow } from './tables.js';
import { enqueueVoidIssuedCard } from './void-issued.js';
import { statusMove } from '../../../db/status-move.js';
import { rowScope } from '../../../db/owned-by.js';

/** How long a supplement work order waits for the member's documents (the merchant's clock). */
export const supplementTtlSeconds = 7 * 24 * 3600;

/** `card.application.<status>`. */
export const emitApplication = (trx: Db, a: CardApplicationRow) =>
  emitCardEvent(trx, a, { type: `card.application.${a.status}`, object: 'card_application', status: a.status });

async function postFee(
  trx: Transaction<Database>,
  a: CardApplicationRow,
  kind: string,
  lines: (p: { memberId: string; merchantId: string; fee: bigint }) => EntryLine[],
) {
  const fee = minorFromDb(a.fee);
  if (fee === 0n) return;
  await postRowEntry(trx, a, {
    kind,
    referenceType: cardReferenceType,
    asset: a.source_asset,
    lines: lines({ memberId: a.member_id, merchantId: a.merchant_id, fee }),
  });
}

/**
 * The `card_issuing` KYC gate: whether the member's current level meets the requirement. Asked when
 * the application is created and again when the issuer approves it (a profile update under re-review
 * drops the level to 0 meanwhile: no card is opened then).
 */
export async function cardKycPasses(trx: Db, caller: MemberCardCaller): Promise<boolean> {
  const level = await kycLevelOf(trx, caller, caller.memberId);
  return level >= (await minKycLevel(trx, caller.environment, 'card_issuing'));
}

export const eventOf: Record<ApplicationDecision, ApplicationEvent> = {
  approved: 'approved',
  rejected: 'rejected',
  need_docs: 'need_docs',
};

/**
 * Applies an issuer decision (or the supplement's expiry) to a locked application exactly once:
 * the state machine decides, then the fee is charged or refunded and the card opened. Answers the
 * updated row, the row itself on a replay, or throws `state_invalid`.
 */
export async function decide(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  app: CardApplicationRow,
  decision: ApplicationDecision | 'expired',
  card?: IssuedCard,
): Promise<CardApplicationRow | undefined> {
  const event: ApplicationEvent = decision === 'expired' ? 'supplement_expired' : eventOf[decision];
  const verdict = applicationTransition(app.status, event, app.supplement_status === 'pending');
  if (verdict.kind === 'replay') return app;
  if (verdict.kind === 'refuse') throw new ApiError(verdict.code, verdict.reason);
  const now = await ctx.clock.now(trx, rowScope(app));
  // A decision is the issuer's answer: nothing is left to reconcile (and a supplement sent back to review is not
  // re-queried).
  const set: Record<string, unknown> = { ...statusMove(app, verdict.to, now), next_check_at: null };
  if (event === 'need_docs' || event === 'approved') set.upstream_outcome = 'accepted';
  // The KYC gate again at approval: a member whose level fell below `card_issuing` since applying
  // (a profile update under re-review) gets no card; the application fails and the fee is refunded.
  const kycLapsed = event === 'approved' && !(await cardKycPasses(trx, { ...rowScope(app), memberId: app.member_id }));
  if (kycLapsed) {
    set.status = 'failed';
    set.failure_reason = 'kyc_required';
  }
  if (event === 'need_docs') {
    set.supplement_status = 'pending';
    set.supplement_expires_at = new Date(now.getTime() + supplementTtlSeconds * 1000);
  }
  if (event === 'supplement_expired') set.failure_reason = 'supplement_expired';
  if (event === 'rejected') set.failure_reason = 'rejected_by_issuer';
  if (event === 'approved' && !kycLapsed) {
    if (!card) throw new Error(`cards: approval of ${app.id} without the issued card`);
    const product = (await productBySeq(trx, app.environment, app.product_seq))!;
    const opened = await openCard(
      trx,
      {
        merchantId: app.merchant_id,
        environment: app.environment,
        memberId: app.member_id,
        applicationId: app.id,
        productSeq: app.product_seq,
        formFactor: product.form_factor,
        currency: product.currency,
        issued: card,
        billingAddress: app.shipping_address,
      },
      now,
    );
    set.card_id = opened.id;
    await postFee(trx, app, cardEntryKinds.feeCharge, feeChargeLines);
    await emitCardStatus(trx, opened);
  }
  if (event === 'rejected' || event === 'supplement_expired' || kycLapsed)
    await postFee(trx, app, cardEntryKinds.feeRefund, feeRefundLines);
  // The issuer made a card that no one here will hold: it is told to cancel it (void-issued.ts).
  if (kycLapsed && card) await enqueueVoidIssuedCard(trx, app, card.cardRef);
  const updated = await updateApplication(trx, app.id, set);
  await emitApplication(trx, updated);
  return updated;
}

/** The member sent the supplement: the work order is `submitted` and the application goes back to review. */
export async function supplementSubmitted(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  app: CardApplicationRow,
): Promise<CardApplicationRow> {
  const now = await ctx.clock.now(trx, rowScope(app));
  const verdict = applicationTransition(app.status, 'supplement_submitted', supplementOpen(app, now));
  if (verdict.kind !== 'move') throw new ApiError('state_invalid', 'No supplement is pending.');
  const updated = await updateApplication(trx, app.id, {
    ...statusMove(app, verdict.to, now),
    supplement_status: 'submitted',
  });
  await emitApplication(trx, updated);
  return updated;
}
