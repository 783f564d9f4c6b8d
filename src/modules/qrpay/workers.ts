import type { Ticker } from '../../jobs/types.js';
import { reconcileDueOrders, reconcileJobName } from './reconcile.js';

/** Interval of the reconciliation ticker, in milliseconds. */
export const reconcileIntervalMs = 5_000;

/** Re-queries open QR payment orders that are due (SKIP LOCKED claims: safe in several processes). */
export const qrpayReconcileTicker: Ticker = {
  name: reconcileJobName,
  intervalMs: reconcileIntervalMs,
  async run(ctx) {
    await reconcileDueOrders(ctx);
  },
};

/** What the tickers list adds for QR pay. */
export const qrpayTickers: Ticker[] = [qrpayReconcileTicker];
