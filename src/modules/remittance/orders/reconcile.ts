/** Reconciliation of remittance orders: open orders re-queried with the provider until their outcome is known; returns.
 * */
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { openOrderFacts, orderCallInFlight, reconcilePass, resolveByHand } from '../../../provider-orders/index.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { applyDecision, remitOrders } from './apply.js';
import { findOrder } from './queries.js';
import { decideOnQuery, decideOnReturnCheck, isOpen, type Decision } from './state.js';
import type { RemitOrderRow } from './tables.js';
import type { Caller } from '../../../platform/caller.js';
import { rowScope } from '../../../db/owned-by.js';

/** Orders re-queried per pass (bounded batch). */
export const reconcileBatchMax = 50;
/** How long a claimed order is held by one pass, in seconds. */
export const reconcileLeaseSeconds = 60;
export const reconcileJobName = 'remittance.reconcile';

/** Whether the order's payout call may still be running (its deadline has not passed). */
const callInFlight = (ctx: ServiceContext, o: RemitOrderRow) => orderCallInFlight(ctx, o, o.dispatch_started_at);

/** What the provider's answer to a status query, asked now, means for an open order (nothing applied). */
async function queryDecision(ctx: ServiceContext, order: RemitOrderRow): Promise<Decision> {
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.status(rowScope(order), order.id),
  );
  return decideOnQuery(
    openOrderFacts(ctx, order, order.dispatch_started_at),
    answer,
    ctx.config.upstreamNotFoundGraceMs,
  );
}

export async function reconcileOrder(ctx: ServiceContext, order: RemitOrderRow): Promise<RemitOrderRow> {
  if (!isOpen(order.status) || callInFlight(ctx, order)) return order;
  return applyDecision(ctx, order.id, await queryDecision(ctx, order), 'query');
}

/** The operator's resolve of an open order (`resolveByHand`: the provider is asked first). */
export function resolveOrder(
  ctx: ServiceContext,
  order: RemitOrderRow,
  status: 'completed' | 'failed',
): Promise<RemitOrderRow> {
  return resolveByHand<RemitOrderRow, Decision>({
    order,
    requested: status,
    noun: 'remittance',
    callInFlight: callInFlight(ctx, order),
    queryDecision: () => queryDecision(ctx, order),
    operatorDecision: status === 'completed' ? { kind: 'complete' } : { kind: 'fail', reason: 'operator' },
    apply: (decision) => applyDecision(ctx, order.id, decision, 'query'),
  });
}

/** One pass (the shared one, src/provider-orders/store.ts): claims due open orders (SKIP LOCKED) and re-queries each
 * outside any transaction. */
export function reconcileDueOrders(ctx: ServiceContext, batchMax = reconcileBatchMax): Promise<number> {
  return reconcilePass<RemitOrderRow>(
    ctx,
    remitOrders,
    {
      job: reconcileJobName,
      batchMax,
      leaseSeconds: reconcileLeaseSeconds,
      failureMessage: (order) => `remittance ${order.id}: reconciliation failed; retried after the lease`,
    },
    (order) => reconcileOrder(ctx, order),
  );
}

/**
 * Sandbox: the beneficiary bank returns a completed payout (the simulator's books change), then
 * the service learns it from the provider exactly as it would in production and returns the
 * amount to the member's available balance.
 */
export async function simulateReturn(ctx: ServiceContext, caller: Caller, id: string): Promise<RemitOrderRow> {
  const order = await findOrder(ctx.db, id, caller);
  if (!order) throw new ApiError('not_found', 'No such remittance.');
  if (order.status === 'returned') return order;
  if (order.status !== 'completed')
    throw new ApiError('state_invalid', `The remittance is ${order.status}; only a completed one can be returned.`);
  const helper = ctx.upstreams.remittance.sandboxReturn;
  if (!helper) throw new ApiError('not_found');
  const moved = await helper.call(ctx.upstreams.remittance, rowScope(order), order.id);
  if (moved.kind !== 'accepted') throw new ApiError('state_invalid', 'The provider cannot return this payout.');
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.status(rowScope(order), order.id),
  );
  return applyDecision(ctx, order.id, decideOnReturnCheck(order.status, answer), 'query');
}
