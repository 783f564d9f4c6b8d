/**
 * Reconciliation of card applications whose outcome is unknown (docs/cards.md, "Reconciliation"):
 * a submission that timed out or met a 5xx (`pending`, `upstream_outcome` `unknown`, the opening
 * fee frozen): the issuer is asked for the application's state and its decision is applied like
 * any other (approved → card opened and fee charged; rejected → fee refunded; need_docs →
 * supplement work order); in review → the submission is known to have arrived; never received →
 * submitted again under the same request id; no answer → stays `pending`, never refunded.
 *
 * A timed process on the merchant's clock (the sandbox clock advance runs it; shared/workers.ts
 * lists it and its ticker) with the shared backoff of src/provider-orders/lifecycle.ts and its
 * `upstream.reconciliation_stalled` alert. Every change is a conditional one under the row's lock,
 * so a pass racing the request's own answer (or another process) changes nothing twice; the
 * request ids are the issuer's idempotency keys.
 */
import type { ServiceContext } from '../../../service-context.js';
import type { TimedProcess } from '../../../jobs/types.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { alertApplicationUnknownStatus } from './service.js';
import { decide } from './decisions.js';
import { dueApplicationChecks, findApplication, nextApplicationCheck, setApplication } from './queries.js';
import { productBySeq } from '../products/queries.js';
import { postponeCheck } from '../shared/queries.js';
import { alertWhenStalled, nextCheck, reconcileProcess } from '../shared/reconcile.js';
import { applicationQueryDecision, applicationResubmitDecision, type ApplicationReconcileDecision } from './state.js';
import type { CardApplicationRow } from './tables.js';
import { rowScope } from '../../../db/owned-by.js';

export const applicationReconcileName = 'card.application_reconcile';

/** Asks the issuer about one application and applies the answer (once, under the row's lock). */
export async function reconcileApplication(ctx: ServiceContext, app: CardApplicationRow, now: Date): Promise<void> {
  const call = rowScope(app);
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.card.applicationStatus(call, app.id),
  );
  const callAgeMs = now.getTime() - new Date(app.created_at).getTime();
  let decision: ApplicationReconcileDecision = applicationQueryDecision(
    answer,
    callAgeMs,
    ctx.config.upstreamNotFoundGraceMs,
  );
  if (decision.kind === 'resubmit') {
    const product = (await productBySeq(ctx.db, app.environment, app.product_seq))!;
    const outcome = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
      ctx.upstreams.card.submitApplication(call, {
        requestId: app.id,
        bin: product.bin,
        formFactor: product.form_factor,
      }),
    );
    decision = applicationResubmitDecision(outcome);
  }
  await ctx.db.transaction().execute(async (trx) => {
    const locked = await findApplication(trx, call, app.id, true);
    if (
      !locked ||
      locked.status !== 'pending' ||
      locked.upstream_outcome === 'accepted' ||
      locked.next_check_at === null
    )
      return;
    const checks = locked.check_count + 1;
    if (decision.kind === 'decide') {
      await setApplication(trx, app.id, { check_count: checks });
      await decide(
        ctx,
        trx,
        { ...locked, check_count: checks },
        decision.decision,
        answer.kind === 'found' ? answer.card : undefined,
      );
      return;
    }
    if (decision.kind === 'received') {
      await setApplication(trx, app.id, {
        upstream_outcome: 'accepted',
        check_count: checks,
        next_check_at: null,
        updated_at: now,
      });
      return;
    }
    await setApplication(trx, app.id, { check_count: checks, next_check_at: nextCheck(ctx, checks, now) });
    if (decision.kind === 'wait' && decision.unknownStatus !== undefined)
      await alertApplicationUnknownStatus(trx, locked, decision.unknownStatus);
    await alertWhenStalled(
      trx,
      checks,
      { ...rowScope(app), object: 'card_application', objectId: app.id },
      `Card application ${app.id}: the issuer's answer to its submission is still unknown after ${checks} ` +
        `status queries; the opening fee stays frozen.`,
    );
  });
}

export const applicationReconcileProcess: TimedProcess = reconcileProcess({
  name: applicationReconcileName,
  nextDue: nextApplicationCheck,
  due: dueApplicationChecks,
  check: reconcileApplication,
  postpone: (db, app, now, next) => postponeCheck(db, 'card_applications', app.id, now, next),
  failureMessage: (app) => `card application ${app.id}: reconciliation failed; retried later`,
});
