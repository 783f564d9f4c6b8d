/** Reconciliation: open orders re-queried with the provider until their outcome is known. */
import type { ServiceContext } from '../../service-context.js';
import { openOrderFacts, reconcilePass } from '../../provider-orders/index.js';
import { applyDecision, qrpayOrders } from './apply.js';
import { callInFlight, callOf, safely } from './provider.js';
import { decideOnQuery, isOpen, type Decision } from './state.js';
import type { QrOrderRow } from './tables.js';

export { reconcileStalledAfterChecks } from './apply.js';

/** Orders re-queried per reconciliation pass (bounded batch). */
export const reconcileBatchMax = 50;
/** How long a claimed order is held by one pass before another process may take it, in seconds. */
export const reconcileLeaseSeconds = 60;
/** Name under which a pass's failures are logged and counted (the ticker's). */
export const reconcileJobName = 'qrpay.reconcile';

/** What the provider's answer to a status query, asked now, means for an open order (nothing applied). */
export async function queryDecision(ctx: ServiceContext, order: QrOrderRow): Promise<Decision> {
  const answer = await safely(ctx, () => ctx.upstreams.qrpay.status(callOf(order), order.id));
  return decideOnQuery(openOrderFacts(ctx, order, order.call_started_at), answer, ctx.config.upstreamNotFoundGraceMs);
}

/** Re-queries the provider for one open order and applies the answer (exactly once by the claims). */
export async function reconcileOrder(ctx: ServiceContext, order: QrOrderRow): Promise<QrOrderRow> {
  if (!isOpen(order.status) || callInFlight(ctx, order)) return order;
  return applyDecision(ctx, order.id, await queryDecision(ctx, order), 'query');
}

/**
 * One reconciliation pass (the shared one, src/provider-orders/store.ts): claims up to `batchMax`
 * due open orders (SKIP LOCKED; the claim pushes next_check_at out by a lease), then re-queries
 * each outside any transaction. Answers how many were looked at. An order whose re-query fails
 * is logged and counted (`background_failures_total{job="qrpay.reconcile"}`); its lease lapses
 * and a later pass tries again.
 */
export function reconcileDueOrders(ctx: ServiceContext, batchMax = reconcileBatchMax): Promise<number> {
  return reconcilePass<QrOrderRow>(
    ctx,
    qrpayOrders,
    {
      job: reconcileJobName,
      batchMax,
      leaseSeconds: reconcileLeaseSeconds,
      failureMessage: (order) => `QR payment ${order.id}: reconciliation failed; retried after the lease`,
    },
    (order) => reconcileOrder(ctx, order),
  );
}
