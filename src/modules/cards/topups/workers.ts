import type { JobBatchHandler, JobHandlers, Ticker } from '../../../jobs/types.js';
import { dispatchTopUps, reconcileDueTopUps, topUpReconcileJobName } from './dispatch.js';
import { topUpDispatchJobKind } from './service.js';

/** Dispatches the top-ups of the jobs a poll took, together (idempotent: a top-up no longer pending is left alone). */
const dispatchHandler: JobBatchHandler = {
  async many(jobs, ctx) {
    const ids = jobs.map((job) => job.payload.topup_id);
    const outcomes = await dispatchTopUps(
      ctx,
      ids.flatMap((id) => (typeof id === 'string' ? [id] : [])),
    );
    let k = 0;
    return ids.map((id) =>
      typeof id === 'string' ? outcomes[k++] : new Error(`${topUpDispatchJobKind}: payload without topup_id`),
    );
  },
};

export const cardMoneyJobHandlers: JobHandlers = { [topUpDispatchJobKind]: dispatchHandler };

/** Re-queries open top-ups that are due (SKIP LOCKED claims: safe in several processes). */
export const cardMoneyTickers: Ticker[] = [
  {
    name: topUpReconcileJobName,
    intervalMs: 5_000,
    async run(ctx) {
      await reconcileDueTopUps(ctx);
    },
  },
];
