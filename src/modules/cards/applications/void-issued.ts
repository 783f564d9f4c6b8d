/**
 * A card the issuer issued for an application that then failed our own gate (the member's KYC
 * level fell below `card_issuing` before the approval was applied): no card is opened for the
 * member, and the issuer is told to cancel the one it made (`voided`), so no card exists there
 * that nothing here accounts for. A job, queued with the failure in its transaction: retried while
 * the issuer's answer is unknown (the same request id, so a repeat cancels once); a refusal, or
 * no answer by the last attempt, is an operator alert.
 */
import { enqueue, type ClaimedJob } from '../../../jobs/queries.js';
import type { ServiceContext } from '../../../service-context.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { providerStatusOf } from '../../../upstreams/port.js';
import { raiseAlert, raiseAlertOnce } from '../../alerts/index.js';
import type { Db } from '../shared/queries.js';
import type { CardApplicationRow } from './tables.js';

export const voidIssuedCardJobKind = 'card.void_issued';

/** Queued in the transaction that fails the application. */
export function enqueueVoidIssuedCard(trx: Db, app: CardApplicationRow, cardRef: string): Promise<void> {
  return enqueue(trx, {
    kind: voidIssuedCardJobKind,
    payload: { application_id: app.id, merchant_id: app.merchant_id, environment: app.environment, card_ref: cardRef },
    dedupeKey: `${voidIssuedCardJobKind}:${app.id}`,
  });
}

export async function voidIssuedCard(job: ClaimedJob, ctx: ServiceContext): Promise<void> {
  const applicationId = String(job.payload.application_id);
  const call = {
    merchantId: String(job.payload.merchant_id),
    environment: job.payload.environment as 'sandbox' | 'production',
  };
  const cardRef = String(job.payload.card_ref);
  const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.cancelCard(call, { requestId: `void:${applicationId}`, cardRef, reason: 'voided' }),
  );
  if (outcome.kind === 'accepted' && outcome.status === 'succeeded') return;
  // A status outside our enumeration: not taken as cancelled (retried like no answer), and one alert, as every card
  // call raises.
  if (outcome.kind === 'accepted' && providerStatusOf(outcome.status) === undefined) {
    await raiseAlertOnce(ctx.db, {
      kind: 'upstream.unknown_status',
      merchantId: call.merchantId,
      environment: call.environment,
      object: 'card_application',
      objectId: applicationId,
      message:
        `Card application ${applicationId}: the issuer answered the cancellation of card ${cardRef} with a ` +
        `status outside our enumeration (${outcome.status}); it is not taken as cancelled.`,
    });
  }
  const unknown = outcome.kind !== 'rejected';
  if (unknown && job.attempts < job.max_attempts) throw new Error(`card void: issuer outcome ${outcome.kind}; retried`);
  await raiseAlert(ctx.db, {
    kind: 'card.void_failed',
    merchantId: call.merchantId,
    environment: call.environment,
    object: 'card_application',
    objectId: applicationId,
    message: unknown
      ? `Card application ${applicationId} failed (kyc_required) after the issuer had issued card ${cardRef}; ` +
        `its cancellation is still unanswered after ${job.attempts} attempts. Cancel it at the issuer.`
      : `Card application ${applicationId} failed (kyc_required) after the issuer had issued card ${cardRef}; ` +
        `the issuer refused to cancel it. Cancel it at the issuer.`,
  });
}
