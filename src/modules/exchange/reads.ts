/**
 * Exchange order reads (the API's and the console's) and the void of unused locks (`expired`: by
 * the ticker, a timed process, or before a read answers one). No money moves.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../db/keyset-page.js';
import { expireQuotes, findOrder, ordersQuery, type Db } from './queries.js';
import { emitOrderEvent } from './service.js';
import type { ExchangeOrderRow, OrderStatus } from './tables.js';
import { viewOf } from './views.js';
import type { Caller, MerchantScope } from '../../platform/caller.js';

/**
 * Locks whose window has ended, on the merchant's clock, become `expired` before a read answers
 * them: the ticker voids them within its interval, but a read must not show `quoted` for a lock
 * that can no longer be executed. The same claim as the ticker's (`expireQuotes`, SKIP LOCKED),
 * with the same event; run only when a row read is such a lock.
 */
async function expireDueBeforeRead(
  ctx: ServiceContext,
  caller: Caller,
  rows: readonly ExchangeOrderRow[],
): Promise<boolean> {
  const locks = rows.filter((r) => r.status === 'quoted' && r.quote_expires_at !== null);
  if (locks.length === 0) return false;
  const scope = { merchantId: caller.merchantId, environment: caller.environment };
  const now = await ctx.clock.now(ctx.db, scope);
  if (!locks.some((r) => now.getTime() >= new Date(r.quote_expires_at!).getTime())) return false;
  await expireLocks(ctx, { scope, now });
  return true;
}

/** Locks voided in one transaction at most. */
export const expiryBatchMax = 500;

/**
 * Voids up to `expiryBatchMax` locks past their end in one transaction, each with its
 * `exchange.order.expired` event, and answers how many: of one merchant at `now` on its clock
 * (the timed process, a read), or of every merchant on its own clock (the ticker).
 */
export async function expireLocks(ctx: ServiceContext, at?: { scope: MerchantScope; now: Date }): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    const rows = await expireQuotes(trx, expiryBatchMax, at?.scope, at?.now);
    await emitExpired(trx, rows);
    return rows.length;
  });
}

async function getOrder(db: Db, caller: Caller, id: string) {
  const row = await findOrder(db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such exchange order.');
  return viewOf(db, row);
}

async function listOrders(db: Db, caller: Caller, query: PageParams & { status?: OrderStatus }) {
  return viewsOf(db, await keysetPage(ordersQuery(db, caller, query.status), query));
}

async function viewsOf(db: Db, page: ListEnvelope<ExchangeOrderRow>) {
  return viewPage(page, (row) => viewOf(db, row));
}

/** `getOrder` for the API: a lock whose window has ended is voided before it is answered (`expireDueBeforeRead`). */
export async function readOrder(ctx: ServiceContext, caller: Caller, id: string) {
  const row = await findOrder(ctx.db, id, caller);
  if (!row) throw new ApiError('not_found', 'No such exchange order.');
  if (await expireDueBeforeRead(ctx, caller, [row])) return getOrder(ctx.db, caller, id);
  return viewOf(ctx.db, row);
}

/** `listOrders` for the API: the page is read again when a lock on it was voided first. */
export async function readOrders(ctx: ServiceContext, caller: Caller, query: PageParams & { status?: OrderStatus }) {
  const page = await keysetPage(ordersQuery(ctx.db, caller, query.status), query);
  if (await expireDueBeforeRead(ctx, caller, page.data)) return listOrders(ctx.db, caller, query);
  return viewsOf(ctx.db, page);
}

/** Voided locks get their `exchange.order.expired` event in the same transaction. */
async function emitExpired(trx: Transaction<Database>, rows: ExchangeOrderRow[]): Promise<void> {
  for (const row of rows) await emitOrderEvent(trx, row);
}
