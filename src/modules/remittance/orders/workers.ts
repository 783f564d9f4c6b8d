import type { JobBatchHandler, JobHandlers, Ticker } from '../../../jobs/types.js';
import { dispatchOrders } from './dispatch.js';
import { dispatchJobKind } from './service.js';
import { reconcileDueOrders, reconcileJobName } from './reconcile.js';
import { returnWatchProcess, returnWatchTicker } from './return-watch.js';

/** Interval of the reconciliation ticker, in milliseconds. */
export const reconcileIntervalMs = 5_000;

/** Dispatches the orders of the jobs a poll took, together (idempotent: an order no longer pending is left alone). */
const dispatchHandler: JobBatchHandler = {
  async many(jobs, ctx) {
    const ids = jobs.map((job) => job.payload.order_id);
    const named = ids.flatMap((id) => (typeof id === 'string' ? [id] : []));
    const outcomes = await dispatchOrders(ctx, named);
    let k = 0;
    return ids.map((id) =>
      typeof id === 'string' ? outcomes[k++] : new Error('remittance.dispatch: payload without order_id'),
    );
  },
};

export const remittanceJobHandlers: JobHandlers = { [dispatchJobKind]: dispatchHandler };

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
