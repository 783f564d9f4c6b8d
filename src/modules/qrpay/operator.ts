/** The operator's actions on QR payments: an acquirer-side refund, and settling an open order by hand. */
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { minorFromDb } from '../../money/index.js';
import { raiseAlertOnce } from '../alerts/index.js';
import { applyDecision, refundIn } from './apply.js';
import { callInFlight, callOf, safely } from './provider.js';
import { queryDecision } from './reconcile.js';
import { resolveByHand } from '../../provider-orders/index.js';
import { findOrder } from './queries.js';
import { publicStatus, type Decision } from './state.js';
import type { QrOrderRow } from './tables.js';

async function mustFind(ctx: ServiceContext, id: string): Promise<QrOrderRow> {
  const order = await findOrder(ctx.db, id);
  if (!order) throw new ApiError('not_found', 'No such QR payment.');
  return order;
}

/** Acquirer-side refund of a completed payment, asked of the provider, then applied once. */
export async function refundPayment(ctx: ServiceContext, id: string): Promise<{ row: QrOrderRow; replayed: boolean }> {
  const order = await mustFind(ctx, id);
  if (order.status === 'refunded') return { row: order, replayed: true };
  if (order.status !== 'completed')
    throw new ApiError(
      'state_invalid',
      `The payment is ${publicStatus(order.status)}; only a completed payment can be refunded.`,
    );
  const answer = await safely(ctx, () =>
    ctx.upstreams.qrpay.refund(callOf(order), { paymentRequestId: order.id, amountMinor: minorFromDb(order.amount) }),
  );
  if (answer.kind === 'rejected')
    throw new ApiError('request_rejected', `The provider refused the refund: ${answer.reason}.`);
  if (answer.kind === 'timeout') throw new ApiError('upstream_timeout');
  if (answer.kind === 'unknown') throw new ApiError('upstream_error');
  // Only a refund the provider says is done moves money back; any other status (one outside its
  // enumeration above all) is an outcome not known: nothing is credited, the operator is told once.
  if (answer.status !== 'refunded') {
    await raiseAlertOnce(ctx.db, {
      kind: 'upstream.unknown_status',
      merchantId: order.merchant_id,
      environment: order.environment,
      object: 'qrpay_order',
      objectId: order.id,
      message:
        `QR payment ${order.id}: the provider answered the refund with the status ${answer.status}, not ` +
        `refunded; nothing was credited.`,
    });
    throw new ApiError(
      'upstream_error',
      'The provider did not confirm the refund; nothing was credited. Ask the provider, then retry.',
    );
  }
  const row = await ctx.db.transaction().execute(async (trx) => refundIn(trx, order.id));
  if (row) return { row, replayed: false };
  const now = (await findOrder(ctx.db, order.id))!;
  return { row: now, replayed: true };
}

/** The operator settles an open (typically suspended) order by hand (`resolveByHand`: the provider is asked first). */
export async function resolvePayment(
  ctx: ServiceContext,
  id: string,
  status: 'completed' | 'failed',
): Promise<QrOrderRow> {
  const order = await mustFind(ctx, id);
  return resolveByHand<QrOrderRow, Decision>({
    order,
    requested: status,
    noun: 'payment',
    callInFlight: callInFlight(ctx, order),
    queryDecision: () => queryDecision(ctx, order),
    operatorDecision: status === 'completed' ? { kind: 'complete' } : { kind: 'fail', reason: 'operator' },
    apply: (decision) => applyDecision(ctx, order.id, decision, 'query'),
  });
}
