/**
 * The shared SQL of an order handed to a provider (see lifecycle.ts for the rules): the
 * claims that move it, the `suspended` anomaly with its operator alert, the re-query schedule
 * with its `upstream.reconciliation_stalled` alert, and the reconciliation pass. Parametrised by
 * the area's table and names; the area keeps its ledger entries and events (it posts them after
 * a claim it won) and raises alerts through the callback it passes, as this layer imports no
 * module. Every order table has the columns of `LifecycleOrdersTable`.
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import type { Environment, NullableTimestamp, Timestamp } from '../db/columns.js';
import type { Config } from '../platform/config.js';
import { scopeNowSql } from '../platform/clock.js';
import { reportFailure } from '../jobs/failures.js';
import {
  isOpenOrder,
  openOrderStatuses,
  reconcileStalledAfterChecks,
  recheckDelayMs,
  type ProviderFacts,
  type UpstreamAlertKind,
} from './lifecycle.js';

/** The columns the lifecycle reads and writes; each area's order table has them (and more). */
export interface LifecycleOrdersTable {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: string;
  status_version: number;
  upstream_outcome: string;
  provider_order_id: string | null;
  provider_status: string | null;
  check_count: number;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** The minimum of an order row the lifecycle needs. */
export interface LifecycleOrderRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: string;
  check_count: number;
  provider_status: string | null;
}

export interface LifecycleAlert {
  kind: UpstreamAlertKind | 'upstream.reconciliation_stalled';
  merchantId: string;
  environment: Environment;
  object: string;
  objectId: string;
  message: string;
}

/** One area's order table and how its messages name an order. */
export interface OrderStore {
  /** The table (`qrpay_orders`). */
  table: string;
  /** The alerts' object kind (`qrpay_order`). */
  object: string;
  /** How a message names one order, before its id (`QR payment`). */
  label: string;
  /** What the provider holds, in the order-missing alert (`an order`, `a payout`). */
  providerHolds: string;
  /** The alerts area's raiseAlert, in the caller's transaction. */
  raiseAlert(trx: Transaction<Database>, alert: LifecycleAlert): Promise<unknown>;
}

type LifecycleDb = Record<string, LifecycleOrdersTable>;
type Fields = Record<string, unknown>;

/** The area's table seen through the lifecycle's columns (the SQL names the area's real table). */
const ordersOf = (db: Db) => db as unknown as Kysely<LifecycleDb>;

/** The order's merchant's time (a sandbox merchant's own clock), for the order's timestamps in an UPDATE of it. */
export function orderNowSql(store: Pick<OrderStore, 'table'>): RawBuilder<Date> {
  return scopeNowSql(sql.ref(`${store.table}.merchant_id`), sql.ref(`${store.table}.environment`));
}

/** The provider's facts as columns (only those given). */
export const providerFields = (d: ProviderFacts): Fields => ({
  ...(d.providerOrderId ? { provider_order_id: d.providerOrderId } : {}),
  ...(d.providerStatus ? { provider_status: d.providerStatus } : {}),
});

export interface Move {
  to: string;
  /** The statuses the order may leave for `to` (the claim's WHERE). */
  from: readonly string[];
  /** The column stamped with the merchant's time (`completed_at`). */
  at: string;
  fields: Fields;
}

/**
 * Claims a move of an order exactly once: one conditional UPDATE (of concurrent callers only one
 * sees the order in a state it may leave), which bumps status_version. Answers the moved row to
 * the winner, which alone then posts the ledger entry and writes the event in the same transaction.
 */
export async function claimMove<Row>(
  trx: Transaction<Database>,
  store: OrderStore,
  id: string,
  move: Move,
): Promise<Row | undefined> {
  const claimed = await ordersOf(trx)
    .updateTable(store.table)
    .set((eb) => ({
      ...move.fields,
      status: move.to,
      status_version: eb('status_version', '+', 1),
      [move.at]: orderNowSql(store),
      updated_at: orderNowSql(store),
    }))
    .where('id', '=', id)
    .where('status', 'in', [...move.from])
    .returningAll()
    .executeTakeFirst();
  return claimed as Row | undefined;
}

/**
 * Suspends a processing order whose provider answered a status outside our enumeration (or lost
 * an order it had accepted), and alerts the operator once: the claim's winner alone raises it.
 */
export async function suspendOrder(
  trx: Transaction<Database>,
  store: OrderStore,
  id: string,
  d: { alertKind: UpstreamAlertKind; providerStatus: string },
  fields: Fields,
): Promise<void> {
  // Ours, not the caller's: status_version (which orders the caller's view) does not move.
  const claimed = await ordersOf(trx)
    .updateTable(store.table)
    .set({ ...fields, status: 'suspended', upstream_outcome: 'accepted', updated_at: orderNowSql(store) })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return;
  await store.raiseAlert(trx, {
    kind: d.alertKind,
    merchantId: claimed.merchant_id,
    environment: claimed.environment,
    object: store.object,
    objectId: claimed.id,
    message:
      d.alertKind === 'upstream.unknown_status'
        ? `${store.label} ${claimed.id}: the provider answered a status outside our enumeration ` +
          `(${d.providerStatus}); the order is suspended with its funds frozen until an operator resolves it.`
        : `${store.label} ${claimed.id}: the provider no longer finds ${store.providerHolds} it had accepted; ` +
          `suspended with its funds frozen.`,
  });
}

/** Records what the provider said of an order that stays open. A late call answer never overwrites what a query has
 * learnt since. */
export async function recordWait(
  trx: Transaction<Database>,
  store: OrderStore,
  id: string,
  outcome: string,
  fields: Fields,
  source: 'call' | 'query',
): Promise<void> {
  let q = ordersOf(trx)
    .updateTable(store.table)
    .set({ ...fields, upstream_outcome: outcome, updated_at: orderNowSql(store) })
    .where('id', '=', id)
    .where('status', 'in', openOrderStatuses);
  if (source === 'call') q = q.where('upstream_outcome', '=', 'pending');
  await q.execute();
}

/**
 * Applies a decision (`applyIn`, the area's) in one transaction and schedules the next re-query
 * of an order that stays open. `source` is `call` for the provider call's answer and `query` for
 * a status query (counted in check_count, which drives the backoff; the `reconcileStalledAfterChecks`th
 * raises one `upstream.reconciliation_stalled` alert).
 */
export async function applyAndSchedule<Row extends LifecycleOrderRow>(
  ctx: { db: Kysely<Database>; config: Pick<Config, 'upstreamReconcileDelayMs' | 'upstreamReconcileMaxDelayMs'> },
  store: OrderStore,
  id: string,
  source: 'call' | 'query',
  applyIn: (trx: Transaction<Database>) => Promise<void>,
): Promise<Row> {
  return ctx.db.transaction().execute(async (trx) => {
    await applyIn(trx);
    const db = ordersOf(trx);
    const row = (await db
      .selectFrom(store.table)
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as unknown as Row;
    if (!isOpenOrder(row.status)) return row;
    const checks = row.check_count + (source === 'query' ? 1 : 0);
    if (source === 'query' && checks === reconcileStalledAfterChecks) {
      await store.raiseAlert(trx, {
        kind: 'upstream.reconciliation_stalled',
        merchantId: row.merchant_id,
        environment: row.environment,
        object: store.object,
        objectId: row.id,
        message:
          `${store.label} ${row.id} is still unresolved after ${checks} status queries (last provider ` +
          `status: ${row.provider_status ?? 'none'}); its funds stay frozen.`,
      });
    }
    const delayMs = recheckDelayMs(
      Math.max(1, checks),
      ctx.config.upstreamReconcileDelayMs,
      ctx.config.upstreamReconcileMaxDelayMs,
    );
    return (await db
      .updateTable(store.table)
      .set({
        check_count: checks,
        next_check_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})` as unknown as Date,
        ...(source === 'query' ? { last_checked_at: sql<Date>`now()` as unknown as Date } : {}),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()) as unknown as Row;
  });
}

/**
 * Claims up to `batchMax` due open orders (SKIP LOCKED, so concurrent processes take different
 * ones), other than those of `excluding`; the claim pushes next_check_at out by `leaseSeconds`.
 */
export async function claimDueOrders<Row>(
  db: Kysely<Database>,
  store: Pick<OrderStore, 'table'>,
  batchMax: number,
  leaseSeconds: number,
  excluding: readonly string[] = [],
): Promise<Row[]> {
  const rows = await ordersOf(db)
    .updateTable(store.table)
    .set({ next_check_at: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` as unknown as Date })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom(store.table)
        .select('id')
        .where('status', 'in', openOrderStatuses)
        .where('next_check_at', '<=', sql<Date>`now()`)
        .$if(excluding.length > 0, (q) => q.where('id', 'not in', [...excluding]))
        .orderBy('next_check_at')
        .limit(batchMax)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
  return rows as unknown as Row[];
}

/**
 * One reconciliation pass: up to `batchMax` due open orders, each claimed when its turn comes and
 * re-queried (`reconcileOne`) outside any transaction. One at a time, so that an order's lease
 * starts with its own query: a batch claimed at once would hold its last orders through every
 * query before theirs (50 slow provider answers outlast a 60-second lease), and another process
 * would claim and query them too. Answers how many were looked at. An order whose re-query fails
 * is logged and counted (`background_failures_total{job}`); its lease lapses and a later pass
 * tries again.
 */
export async function reconcilePass<Row extends LifecycleOrderRow>(
  ctx: Parameters<typeof reportFailure>[0] & { db: Kysely<Database> },
  store: Pick<OrderStore, 'table'>,
  pass: { job: string; batchMax: number; leaseSeconds: number; failureMessage: (order: Row) => string },
  reconcileOne: (order: Row) => Promise<unknown>,
): Promise<number> {
  // The orders looked at in this pass: one due again at once (no re-query delay) waits for the next pass.
  const seen: string[] = [];
  while (seen.length < pass.batchMax) {
    const [order] = await claimDueOrders<Row>(ctx.db, store, 1, pass.leaseSeconds, seen);
    if (!order) break;
    seen.push(order.id);
    try {
      await reconcileOne(order);
    } catch (err) {
      reportFailure(ctx, { job: pass.job, attempt: order.check_count + 1 }, err, pass.failureMessage(order));
    }
  }
  return seen.length;
}
