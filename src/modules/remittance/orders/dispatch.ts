/**
 * The dispatch job of a remittance order: the payee is registered with the provider (once per
 * shared payee), the order moves `pending` → `processing` (version 2, event) and the payout is
 * submitted with the order id as the provider's idempotency key; its answer is applied once.
 * A registration the provider refuses fails the order (freeze released); one it does not answer
 * is retried later (nothing was sent). The payout's outcome-unknown answers are left to
 * reconciliation: never refunded on a timeout.
 *
 * The jobs a poll took run together (`dispatchOrders`, a batch job handler): the usual orders,
 * whose payee the provider already knows, are claimed first in one statement that reads the
 * payee's reference and the member's external id itself (no read of the orders before it); only
 * orders whose payee is not registered yet are read, their payees registered, then claimed. The
 * payouts' answers are applied together once all are in (`applyDecision.many`: the usual `wait`s
 * in one statement).
 */
import type { ServiceContext } from '../../../service-context.js';
import { minorFromDb } from '../../../money/index.js';
import { RetryLater } from '../../../jobs/types.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { claimDispatches } from '../../../provider-orders/index.js';
import { applyDecision, emitOrderEvents, failIn, remitOrders, type ClaimedOrderRow } from './apply.js';
import { externalMemberIdSql, findOrders, payeeRefSql, payeeRegisteredSql } from './queries.js';
import { entitiesByIds, entityTypesBySeq, recordProviderPayeeRefs } from '../payees/queries.js';
import { decideOnCall, type Decision } from './state.js';
import type { PayeeEntityRow } from '../payees/tables.js';
import type { RemitOrderRow } from './tables.js';
import { rowScope } from '../../../db/owned-by.js';
import { withPrefix } from '../../../platform/ids.js';

/** Delay before a dispatch whose registration got no answer tries again, in milliseconds. */
export const registrationRetryMs = 5_000;

type DispatchClaim = ClaimedOrderRow & { payee_ref: string | null };

/** What became of a payee's registration: its reference, the provider's refusal, or what to throw for its orders. */
type Registration = { ref: string } | { refused: string } | { error: unknown };

/** Registers a payee the provider does not know yet, for `order` (the first of its orders in the run). */
async function register(
  ctx: ServiceContext,
  order: RemitOrderRow,
  entity: PayeeEntityRow,
  entityType: string,
): Promise<Registration> {
  try {
    const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
      ctx.upstreams.remittance.registerPayee(rowScope(order), {
        payeeKey: entity.id,
        country: entity.country,
        currency: entity.currency,
        paymentMethod: entity.payment_method,
        clearingSystem: entity.clearing_system,
        entityType,
        holderName: entity.holder_name,
        fields: entity.fields,
      }),
    );
    if (answer.kind === 'rejected') return { refused: answer.reason };
    if (answer.kind !== 'registered')
      return { error: new RetryLater(registrationRetryMs, `payee registration: ${answer.kind}`) };
    return { ref: answer.payeeRef };
  } catch (err) {
    return { error: err };
  }
}

/**
 * Moves `pending` → `processing` once (the claim), records that the payout call starts now and
 * writes the events, for many orders in one transaction (two statements), only those whose payee
 * the provider already knows. The claimed rows, in no particular order.
 */
async function claimDispatch(ctx: ServiceContext, ids: readonly string[]): Promise<DispatchClaim[]> {
  if (ids.length === 0) return [];
  return ctx.db.transaction().execute(async (trx) => {
    const claimed = await claimDispatches<DispatchClaim>(ctx, trx, remitOrders, ids, {
      where: payeeRegisteredSql(),
      returning: [externalMemberIdSql(), payeeRefSql()],
    });
    await emitOrderEvents(trx, claimed);
    return claimed;
  });
}

/** Submits the claimed order's payout (the order id its idempotency key): what its answer decides. */
async function submit(ctx: ServiceContext, claimed: DispatchClaim): Promise<Decision> {
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.submit(rowScope(claimed), {
      requestId: claimed.id,
      payeeRef: claimed.payee_ref!,
      payoutCurrency: claimed.payout_currency,
      payoutAmountMinor: minorFromDb(claimed.payout_amount),
    }),
  );
  return decideOnCall(answer);
}

/**
 * Registers the payees of pending orders the provider does not know yet (each shared payee once,
 * the calls at once; the references recorded in one statement). An order whose payee the provider
 * refuses fails (its freeze released); one whose registration got no answer is tried again later
 * (nothing was sent). Answers the outcomes of those orders (`outcomes`, by id).
 */
async function registerPayees(ctx: ServiceContext, ids: readonly string[], outcomes: Map<string, unknown>) {
  const orders = (await findOrders(ctx.db, ids)).filter((o) => o.status === 'pending');
  const entities = await entitiesByIds(
    ctx.db,
    orders.map((o) => o.entity_id),
  );
  const entityTypes = await entityTypesBySeq(
    ctx.db,
    orders.map((o) => String(o.payee_seq)),
  );
  const registrations = new Map<string, Registration>();
  await Promise.all(
    [...entities.values()].map(async (entity) => {
      if (entity.provider_payee_ref) return registrations.set(entity.id, { ref: entity.provider_payee_ref });
      const order = orders.find((o) => o.entity_id === entity.id)!;
      registrations.set(entity.id, await register(ctx, order, entity, entityTypes.get(String(order.payee_seq))!));
    }),
  );
  await recordProviderPayeeRefs(
    ctx.db,
    [...registrations.entries()].flatMap(([entityId, r]) => ('ref' in r ? [{ entityId, payeeRef: r.ref }] : [])),
  );
  for (const order of orders) {
    const r = registrations.get(order.entity_id)!;
    if ('error' in r) outcomes.set(order.id, r.error);
    else if ('refused' in r) await ctx.db.transaction().execute((trx) => failIn(trx, order.id, 'payee_rejected'));
  }
}

/**
 * The dispatch of many orders (one run of the dispatch jobs a poll took): the orders whose payee
 * the provider already knows are claimed together; the payees of the others are registered (once
 * each), then those orders claimed together too; then every payout is submitted at once and the
 * answers applied together. An order no longer pending is left alone. Each order's outcome in order:
 * undefined when done, or what its dispatch threw.
 */
export async function dispatchOrders(ctx: ServiceContext, ids: readonly string[]): Promise<unknown[]> {
  const prefixed = ids.map((id) => withPrefix('rmt', id));
  const outcomes = new Map<string, unknown>();
  const claimed: DispatchClaim[] = [];
  try {
    claimed.push(...(await claimDispatch(ctx, prefixed)));
  } catch (err) {
    return ids.map(() => err);
  }
  const rest = prefixed.filter((id) => !claimed.some((c) => c.id === id));
  try {
    await registerPayees(ctx, rest, outcomes);
    claimed.push(...(await claimDispatch(ctx, rest)));
  } catch (err) {
    for (const id of rest) if (!outcomes.has(id)) outcomes.set(id, err);
  }
  const decided: { id: string; decision: Decision }[] = [];
  await Promise.all(
    claimed.map(async (row) => {
      try {
        decided.push({ id: row.id, decision: await submit(ctx, row) });
      } catch (err) {
        outcomes.set(row.id, err);
      }
    }),
  );
  const applied = await applyDecision.many(ctx, decided, 'call');
  applied.forEach((a, k) => {
    if ('failed' in a) outcomes.set(decided[k]!.id, a.failed);
  });
  return prefixed.map((id) => outcomes.get(id));
}
