import type { JobHandler, Ticker } from '../../../jobs/types.js';
import { dispatchOrder } from './dispatch.js';
import { dispatchJobKind } from './service.js';
import { reconcileDueOrders, reconcileJobName } from './reconcile.js';
import { returnWatchProcess, returnWatchTicker } from './return-watch.js';

/** Interval of the reconciliation ticker, in milliseconds. */
export const reconcileIntervalMs = 5_000;

/** Dispatches one order (idempotent: an order no longer pending is left alone). */
const dispatchHandler: JobHandler = async (job, ctx) => {
  const id = job.payload.order_id;
  if (typeof id !== 'string') throw new Error('remittance.dispatch: payload without order_id');
  await dispatchOrder(ctx, id);
};

export const remittanceJobHandlers: Record<string, JobHandler> = { [dispatchJobKind]: dispatchHandler };

export const remittanceTickers: Ticker[] = [
  {
    name: reconcileJobName,
    intervalMs: reconcileIntervalMs,
    async run(ctx) {
      await reconcileDueOrders(ctx);
    },
  },
  returnWatchTicker,
];

/** Work due on a merchant's clock: completed payouts asked about for a return by the bank. */
export const remittanceTimedProcesses = [returnWatchProcess];
