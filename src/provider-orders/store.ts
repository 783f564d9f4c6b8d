// Over 300 lines: the shared SQL lifecycle of provider orders (claims, moves, schedule, suspension, reconcile pass).
/**
 * The shared SQL of an order handed to a provider (see lifecycle.ts for the rules): the
 * claims that move it, the `suspended` anomaly with its operator alert, the re-query schedule
 * with its `upstream.reconciliation_stalled` alert, and the reconciliation pass. Parametrised by
 * the area's table and names; the area keeps its ledger entries and events (it posts them after
 * a claim it won) and raises alerts through the callback it passes, as this layer imports no
 * module. Every order table has the columns of `LifecycleOrdersTable`.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Environment } from '../db/columns.js';
import type { Config } from '../platform/config/config.js';
import { reportFailure } from '../jobs/failures.js';
import {
  isOpenOrder,
  reconcileStalledAfterChecks,
  recheckDelayMs,
  type ProviderFacts,
  type UpstreamAlertKind,
} from './lifecycle.js';
import {
  claimDueOrders,
  scheduleCheck,
  selectOrder,
  updateMove,
  updateSuspended,
  updateDispatch,
  updateWaitsAndSchedule,
  selectOrders,
  type WaitNews,
  type ClaimExtras,
  type Fields,
  type Move,
} from './queries.js';

export type { DispatchedOrdersTable, LifecycleOrdersTable } from './tables.js';
export { claimDueOrders, orderNowSql, type ClaimExtras, type Move } from './queries.js';

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

/**
 * The lifecycle's columns of an order created `pending` (version 1), to be handed to the provider
 * later by a job (`claimDispatches`): nothing asked of the provider yet, no check due.
 */
export const pendingOrderColumns = {
  status: 'pending',
  status_version: 1,
  upstream_outcome: 'none',
  provider_order_id: null,
  provider_status: null,
  failure_reason: null,
  dispatch_started_at: null,
  next_check_at: null,
  last_checked_at: null,
} as const;

/** The provider's facts as columns (only those given). */
export const providerFields = (d: ProviderFacts): Fields => ({
  ...(d.providerOrderId ? { provider_order_id: d.providerOrderId } : {}),
  ...(d.providerStatus ? { provider_status: d.providerStatus } : {}),
});

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
  const claimed = await updateMove(trx, store.table, id, move);
  return claimed as Row | undefined;
}

/**
 * Claims the dispatch of `pending` orders once each (`pending` → `processing`) in one statement, in
 * the caller's transaction, and records that their provider calls start now; should this process
 * stop during a call (its deadline and a re-query delay), reconciliation takes the order over. The
 * claimed rows, in no particular order: those still pending (and as `extras.where` asks). `extras`:
 * the area's own condition and more columns read by the claim itself.
 */
export async function claimDispatches<Row>(
  ctx: { config: Pick<Config, 'upstreamCallTimeoutMs' | 'upstreamReconcileDelayMs'> },
  trx: Transaction<Database>,
  store: OrderStore,
  ids: readonly string[],
  extras?: ClaimExtras,
): Promise<Row[]> {
  const reconcileAfterSeconds = (ctx.config.upstreamCallTimeoutMs + ctx.config.upstreamReconcileDelayMs) / 1000;
  return (await updateDispatch(trx, store.table, ids, reconcileAfterSeconds, extras)) as Row[];
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
): Promise<unknown> {
  // Ours, not the caller's: status_version (which orders the caller's view) does not move.
  const claimed = await updateSuspended(trx, store.table, id, fields);
  if (!claimed) return undefined;
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
  return claimed;
}

/** The decisions that keep an order open with news from the provider, which the lifecycle applies itself. */
export type OpenOrderDecision =
  { kind: 'suspend'; alertKind: UpstreamAlertKind; providerStatus: string } | { kind: 'wait'; outcome: string };

/** A decision the area applies itself: every one but those that keep the order open and `none`. */
export type Settlement<D extends { kind: string }> = Exclude<D, { kind: OpenOrderDecision['kind'] | 'none' }>;

/**
 * An area's `applyDecision(ctx, id, decision, source)`: applies a decision of the lifecycle's rules
 * to an order in one transaction, and schedules the next re-query of an order that stays open:
 * `wait` by the lifecycle in one statement with the schedule (`waitAndSchedule`), `suspend` by the
 * lifecycle with its alert (`fields`: the decision's provider facts as the area's columns), `none`
 * not at all, every other (complete, fail, the area's reverse) by the area's `settle`, which
 * claims the move and writes its ledger entry and event (and may answer the row its last claim
 * moved, which is then not read again). `source` is `call` for the provider call's answer and
 * `query` for a status query (counted in check_count, which drives the backoff).
 */
export function decisionApplier<Row extends LifecycleOrderRow, D extends { kind: string }>(
  store: OrderStore,
  fields: (d: D & OpenOrderDecision) => Fields,
  settle: (trx: Transaction<Database>, id: string, d: Settlement<D>) => Promise<Row | undefined | void>,
) {
  const newsOf = (id: string, decision: D): WaitNews => {
    const wait = decision as D & OpenOrderDecision & { kind: 'wait' };
    return { id, outcome: wait.outcome, fields: fields(wait) };
  };
  const one = async (ctx: ScheduleContext, id: string, decision: D, source: 'call' | 'query'): Promise<Row> => {
    if (decision.kind === 'wait') return (await waitsAndSchedule<Row>(ctx, store, [newsOf(id, decision)], source))[0]!;
    return applyAndSchedule<Row>(ctx, store, id, source, async (trx) => {
      if (decision.kind === 'none') return undefined;
      if (decision.kind === 'suspend') {
        const suspend = decision as D & OpenOrderDecision & { kind: 'suspend' };
        return (await suspendOrder(trx, store, id, suspend, fields(suspend))) as Row;
      }
      return settle(trx, id, decision as Settlement<D>);
    });
  };
  /**
   * The decisions of one run (a dispatch job's payout calls): the `wait`s, the usual answer, in one
   * transaction and one statement; each other decision as `one` applies it. Each order's row, or
   * what its apply threw (`{ failed }`), in order.
   */
  const many = async (
    ctx: ScheduleContext,
    decisions: readonly { id: string; decision: D }[],
    source: 'call' | 'query',
  ): Promise<(Row | { failed: unknown })[]> => {
    const answers: (Row | { failed: unknown } | undefined)[] = decisions.map(() => undefined);
    const waits = [...decisions.keys()].filter((i) => decisions[i]!.decision.kind === 'wait');
    if (waits.length > 1) {
      try {
        const rows = await waitsAndSchedule<Row>(
          ctx,
          store,
          waits.map((i) => newsOf(decisions[i]!.id, decisions[i]!.decision)),
          source,
        );
        waits.forEach((i, k) => (answers[i] = rows[k]));
      } catch (failed) {
        for (const i of waits) answers[i] = { failed };
      }
    }
    await Promise.all(
      decisions.map(async ({ id, decision }, i) => {
        if (answers[i] !== undefined) return;
        answers[i] = await one(ctx, id, decision, source).catch((failed: unknown) => ({ failed }));
      }),
    );
    return answers as (Row | { failed: unknown })[];
  };
  return Object.assign(one, { many });
}

type ScheduleContext = {
  db: Kysely<Database>;
  config: Pick<Config, 'upstreamReconcileDelayMs' | 'upstreamReconcileMaxDelayMs'>;
};

/** The `reconcileStalledAfterChecks`th status query of an order still open raises one alert. */
async function alertIfStalled(
  trx: Transaction<Database>,
  store: OrderStore,
  row: LifecycleOrderRow,
  checks: number,
  source: 'call' | 'query',
): Promise<void> {
  if (source !== 'query' || checks !== reconcileStalledAfterChecks) return;
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

/**
 * Records what the provider said of orders that stay open (a late call answer never overwrites
 * what a query has learnt since) and schedules their next re-query, in one statement for all of
 * them (`updateWaitsAndSchedule`); the stalled alert as `applyAndSchedule` raises it. An order no
 * longer open is answered as it is. The rows in the order of `news`.
 */
async function waitsAndSchedule<Row extends LifecycleOrderRow>(
  ctx: ScheduleContext,
  store: OrderStore,
  news: readonly WaitNews[],
  source: 'call' | 'query',
): Promise<Row[]> {
  return ctx.db.transaction().execute(async (trx) => {
    const query = source === 'query';
    const { upstreamReconcileDelayMs: baseMs, upstreamReconcileMaxDelayMs: maxMs } = ctx.config;
    const schedule = { increment: query ? 1 : 0, baseMs, maxMs, checked: query };
    const updated = await updateWaitsAndSchedule<Row>(trx, store.table, news, !query, schedule);
    const rows = new Map(updated.map((r) => [r.id, r]));
    const closed = news.filter((n) => !rows.has(n.id)).map((n) => n.id);
    for (const row of await selectOrders<Row>(trx, store.table, closed)) rows.set(row.id, row);
    for (const row of updated) await alertIfStalled(trx, store, row, row.check_count, source);
    return news.map((n) => {
      const row = rows.get(n.id);
      if (!row) throw new Error(`${store.table}: no order ${n.id}`);
      return row;
    });
  });
}

/**
 * Applies a decision (`applyIn`, the area's) in one transaction and schedules the next re-query
 * of an order that stays open. `applyIn` may answer the order's row as its last UPDATE returned
 * it (not read again then); undefined (nothing updated): the row is read. `source` is `call` for
 * the provider call's answer and `query` for a status query (counted in check_count, which drives
 * the backoff; the `reconcileStalledAfterChecks`th raises one `upstream.reconciliation_stalled` alert).
 */
export async function applyAndSchedule<Row extends LifecycleOrderRow>(
  ctx: ScheduleContext,
  store: OrderStore,
  id: string,
  source: 'call' | 'query',
  applyIn: (trx: Transaction<Database>) => Promise<Row | undefined | void>,
): Promise<Row> {
  return ctx.db.transaction().execute(async (trx) => {
    const row = (await applyIn(trx)) || (await selectOrder<Row>(trx, store.table, id));
    if (!isOpenOrder(row.status)) return row;
    const checks = row.check_count + (source === 'query' ? 1 : 0);
    await alertIfStalled(trx, store, row, checks, source);
    const delayMs = recheckDelayMs(
      Math.max(1, checks),
      ctx.config.upstreamReconcileDelayMs,
      ctx.config.upstreamReconcileMaxDelayMs,
    );
    return scheduleCheck<Row>(trx, store.table, id, checks, delayMs, source === 'query');
  });
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
