import type { ServiceContext } from '../../../service-context.js';
import { recheckDelayMs } from '../../../provider-orders/index.js';

/** What the card area's reconciliation processes share (applications/reconcile.ts, controls/reconcile.ts). */

/** Rows looked at per process run (a bound on one batch). */
export const reconcileBatchMax = 50;

/** The next check of a row after `checks` checks: the shared backoff of src/provider-orders/lifecycle.ts. */
export const nextCheck = (ctx: ServiceContext, checks: number, now: Date) =>
  new Date(
    now.getTime() +
      recheckDelayMs(Math.max(1, checks), ctx.config.upstreamReconcileDelayMs, ctx.config.upstreamReconcileMaxDelayMs),
  );
