/**
 * The dispatch job of a remittance order: the payee is registered with the provider (once per
 * shared payee), the order moves `pending` → `processing` (version 2, event) and the payout is
 * submitted with the order id as the provider's idempotency key; its answer is applied once.
 * A registration the provider refuses fails the order (freeze released); one it does not answer
 * is retried later (nothing was sent). The payout's outcome-unknown answers are left to
 * reconciliation: never refunded on a timeout.
 *
 * The usual order, whose payee the provider already knows, is claimed first: the claim reads the
 * payee's reference and the member's external id itself (no read of the order before it); only
 * an order whose payee is not registered yet is read, its payee registered, then claimed.
 */
import type { ServiceContext } from '../../../service-context.js';
import { minorFromDb } from '../../../money/index.js';
import { RetryLater } from '../../../jobs/types.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { claimDispatch as claimDispatchIn } from '../../../provider-orders/index.js';
import { applyDecision, emitOrderEvent, failIn, remitOrders, type ClaimedOrderRow } from './apply.js';
import { externalMemberIdSql, findOrder, payeeRefSql, payeeRegisteredSql } from './queries.js';
import { entityById, payeeLinkBySeq, recordProviderPayeeRef } from '../payees/queries.js';
import { decideOnCall } from './state.js';
import type { PayeeEntityRow } from '../payees/tables.js';
import type { RemitOrderRow } from './tables.js';
import { rowScope } from '../../../db/owned-by.js';
import { withPrefix } from '../../../platform/ids.js';

/** Delay before a dispatch whose registration got no answer tries again, in milliseconds. */
export const registrationRetryMs = 5_000;

/** The provider's reference of the order's payee, registering it first if needed; or why not. */
async function payeeRefOf(
  ctx: ServiceContext,
  order: RemitOrderRow,
  entity: PayeeEntityRow,
): Promise<{ ref: string } | { refused: string }> {
  if (entity.provider_payee_ref) return { ref: entity.provider_payee_ref };
  const link = await payeeLinkBySeq(ctx.db, BigInt(order.payee_seq));
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.registerPayee(rowScope(order), {
      payeeKey: entity.id,
      country: entity.country,
      currency: entity.currency,
      paymentMethod: entity.payment_method,
      clearingSystem: entity.clearing_system,
      entityType: link.entity_type,
      holderName: entity.holder_name,
      fields: entity.fields,
    }),
  );
  if (answer.kind === 'rejected') return { refused: answer.reason };
  if (answer.kind !== 'registered') throw new RetryLater(registrationRetryMs, `payee registration: ${answer.kind}`);
  await recordProviderPayeeRef(ctx.db, entity.id, answer.payeeRef);
  return { ref: answer.payeeRef };
}

type DispatchClaim = ClaimedOrderRow & { payee_ref: string | null };

/**
 * Moves `pending` → `processing` once (the claim), records that the payout call starts now and
 * writes the event; `registeredOnly`: only an order whose payee the provider already knows.
 */
async function claimDispatch(
  ctx: ServiceContext,
  id: string,
  registeredOnly: boolean,
): Promise<DispatchClaim | undefined> {
  return ctx.db.transaction().execute(async (trx) => {
    const claimed = await claimDispatchIn<DispatchClaim>(ctx, trx, remitOrders, id, {
      ...(registeredOnly ? { where: payeeRegisteredSql() } : {}),
      returning: [externalMemberIdSql(), payeeRefSql()],
    });
    if (claimed) await emitOrderEvent(trx, claimed);
    return claimed;
  });
}

/** Submits the claimed order's payout (the order id its idempotency key) and applies the answer. */
async function submit(ctx: ServiceContext, claimed: RemitOrderRow, payeeRef: string): Promise<RemitOrderRow> {
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.submit(rowScope(claimed), {
      requestId: claimed.id,
      payeeRef,
      payoutCurrency: claimed.payout_currency,
      payoutAmountMinor: minorFromDb(claimed.payout_amount),
    }),
  );
  return applyDecision(ctx, claimed.id, decideOnCall(answer), 'call');
}

export async function dispatchOrder(ctx: ServiceContext, id: string): Promise<RemitOrderRow | undefined> {
  const registered = await claimDispatch(ctx, withPrefix('rmt', id), true);
  if (registered) return submit(ctx, registered, registered.payee_ref!);
  const order = await findOrder(ctx.db, id);
  if (!order || order.status !== 'pending') return order;
  const payee = await payeeRefOf(ctx, order, await entityById(ctx.db, order.entity_id));
  if ('refused' in payee) {
    await ctx.db.transaction().execute((trx) => failIn(trx, order.id, 'payee_rejected'));
    return findOrder(ctx.db, id);
  }
  const claimed = await claimDispatch(ctx, order.id, false);
  if (!claimed) return findOrder(ctx.db, id);
  return submit(ctx, claimed, payee.ref);
}
