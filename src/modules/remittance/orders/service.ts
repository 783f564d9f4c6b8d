/**
 * `POST /v1/remittances` and its reads (extensions 10). `marketFor` asks the providers before the
 * transaction; the transaction creates the order (`pending`, version 1), freezes source amount +
 * fee (available → frozen), writes the event and queues the dispatch job (`createOrders`,
 * create.ts, for many orders at once); the provider is called later by that job (dispatch.ts).
 */
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import type { CallContext } from '../../../upstreams/port.js';
import { corridorById } from '../corridors/queries.js';
import { findOrder, ordersQuery, scaleOf } from './queries.js';
import { findActivePayee, payeeIdsOf, type Db, type MemberCaller } from '../payees/queries.js';
import type { PublicStatus } from './state.js';
import type { RemitOrderRow } from './tables.js';
import { orderView } from './views.js';
import type { Caller } from '../../../platform/caller.js';

export const orderErrors = {
  create: [
    'resource_not_found',
    'kyc_required',
    'corridor_not_supported',
    'asset_not_allowed',
    'amount_out_of_range',
    'limit_exceeded',
    'insufficient_balance',
    'upstream_error',
  ],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Job kind of an order's dispatch (workers.ts). */
export const dispatchJobKind = 'remittance.dispatch';

export interface OrderInput {
  payee_id: string;
  source_asset: string;
  source_amount: string;
}

/** What the order is priced with, asked of the providers before the transaction (read-only calls). */
export interface Market {
  /** Mid rate source → payout currency; undefined when the payee is not the member's (the write refuses). */
  midRate?: string;
  /** The provider's earliest payout date for the currency (express line), when it answered. */
  payoutDate?: string;
}

/**
 * Read-only look-ups made outside the order's transaction: the mid rate from the one rate
 * service, and the provider's earliest payout date (an estimate; dispatch sets the real one).
 */
export async function marketFor(ctx: ServiceContext, caller: MemberCaller, input: OrderInput): Promise<Market> {
  const link = await findActivePayee(ctx.db, caller, input.payee_id);
  if (!link) return {};
  const corridor = await corridorById(ctx.db, link.corridor_id);
  if (!corridor) return {};
  const from = input.source_asset.toUpperCase();
  const call: CallContext = caller;
  const deadline = ctx.config.upstreamCallTimeoutMs;
  const [rate, dates] = await Promise.all([
    from === corridor.currency
      ? Promise.resolve({ kind: 'rate' as const, rate: '1' })
      : withDeadline(deadline, () => ctx.upstreams.rates.mid(call, from, corridor.currency)),
    withDeadline(deadline, () =>
      ctx.upstreams.remittance.conversionDates(call, { currency: corridor.currency, line: 'express' }),
    ),
  ]);
  if (rate.kind === 'timeout' || rate.kind === 'unknown')
    throw new ApiError('upstream_error', 'The rate service did not answer; retry with the same key.');
  return {
    midRate: rate.kind === 'rate' ? rate.rate : undefined,
    payoutDate: dates.kind === 'dates' ? dates.earliestValid : undefined,
  };
}

export async function viewOf(db: Db, row: RemitOrderRow) {
  return orderView(
    await payeeIdsOf(db),
    row,
    await scaleOf(db, row.source_asset),
    await scaleOf(db, row.payout_currency),
  );
}

export async function getOrder(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such remittance.');
  return viewOf(db, row);
}

export async function listOrders(db: Db, caller: Caller, query: PageParams & { status?: PublicStatus }) {
  return viewPage(await keysetPage(ordersQuery(db, caller, query.status), query), (row) => viewOf(db, row));
}
