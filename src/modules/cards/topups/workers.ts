import type { JobHandler, Ticker } from '../../../jobs/types.js';
import { dispatchTopUp, reconcileDueTopUps, topUpReconcileJobName } from './dispatch.js';
import { topUpDispatchJobKind } from './service.js';

/** Dispatches one top-up to the card issuer (idempotent: a top-up no longer pending is left alone). */
const dispatchHandler: JobHandler = async (job, ctx) => {
  const id = job.payload.topup_id;
  if (typeof id !== 'string') throw new Error(`${topUpDispatchJobKind}: payload without topup_id`);
  await dispatchTopUp(ctx, id);
};

export const cardMoneyJobHandlers: Record<string, JobHandler> = { [topUpDispatchJobKind]: dispatchHandler };

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
