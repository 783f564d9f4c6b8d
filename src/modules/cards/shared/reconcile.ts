/**
 * What the card area's reconciliation processes share (applications/reconcile.ts,
 * controls/reconcile.ts): the batch bound, the backoff, the stalled alert and the process that
 * runs the due checks of a scope.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import type { ClockScope } from '../../../platform/clock.js';
import type { TimedProcess } from '../../../jobs/types.js';
import { reportFailure } from '../../../jobs/failures.js';
import { recheckDelayMs, reconcileStalledAfterChecks } from '../../../provider-orders/index.js';
import { raiseAlert } from '../../alerts/index.js';
import type { Db } from './queries.js';

/** Rows looked at per process run (a bound on one batch). */
export const reconcileBatchMax = 50;

/** The next check of a row after `checks` checks: the shared backoff of src/provider-orders/lifecycle.ts. */
export const nextCheck = (ctx: ServiceContext, checks: number, now: Date) =>
  new Date(
    now.getTime() +
      recheckDelayMs(Math.max(1, checks), ctx.config.upstreamReconcileDelayMs, ctx.config.upstreamReconcileMaxDelayMs),
  );

/** The one `upstream.reconciliation_stalled` alert of a row, raised at its `reconcileStalledAfterChecks`th check. */
export async function alertWhenStalled(
  trx: Db,
  checks: number,
  alert: { merchantId: string; environment: ClockScope['environment']; object: string; objectId: string },
  message: string,
): Promise<void> {
  if (checks === reconcileStalledAfterChecks)
    await raiseAlert(trx, { kind: 'upstream.reconciliation_stalled', ...alert, message });
}

/**
 * A reconciliation process on the merchant's clock: each due row of the scope (at most
 * `reconcileBatchMax`) checked with the issuer; a check that fails is logged and counted
 * (`background_failures_total{job}`) and its row's next check moves on, so that a failing row does
 * not hold the clock (the TimedProcess contract).
 */
export function reconcileProcess<Row extends { check_count: number }>(p: {
  name: string;
  nextDue: (db: Kysely<Database>, scope: ClockScope) => Promise<Date | null>;
  due: (db: Kysely<Database>, scope: ClockScope, now: Date, limit: number) => Promise<Row[]>;
  check: (ctx: ServiceContext, row: Row, now: Date) => Promise<void>;
  postpone: (db: Kysely<Database>, row: Row, now: Date, next: Date) => Promise<void>;
  failureMessage: (row: Row) => string;
}): TimedProcess {
  return {
    name: p.name,
    nextDue: p.nextDue,
    async runDue(ctx, scope, now) {
      for (const row of await p.due(ctx.db, scope, now, reconcileBatchMax)) {
        try {
          await p.check(ctx, row, now);
        } catch (err) {
          reportFailure(ctx, { job: p.name, attempt: row.check_count + 1 }, err, p.failureMessage(row));
          await p.postpone(ctx.db, row, now, nextCheck(ctx, row.check_count + 1, now));
        }
      }
    },
  };
}
