import type { Ticker } from '../jobs/types.js';
import { reconcileDueOrders } from '../modules/qrpay/service.js';
import { purgeExpiredBehaviors } from './behaviors.js';

/** Interval of the reconciliation ticker, in milliseconds. */
export const reconcileIntervalMs = 5_000;

/**
 * Re-queries open upstream orders that are due (SKIP LOCKED claims: safe in several processes)
 * and drops expired sandbox presets.
 */
export const upstreamReconcileTicker: Ticker = {
  name: 'upstreams.reconcile',
  intervalMs: reconcileIntervalMs,
  async run(ctx) {
    await reconcileDueOrders(ctx);
    await purgeExpiredBehaviors(ctx.db);
  },
};

/** Listed in src/background.ts. */
export const upstreamTickers: Ticker[] = [upstreamReconcileTicker];
