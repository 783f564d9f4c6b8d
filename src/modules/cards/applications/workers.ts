import type { TimedProcess } from '../../../jobs/types.js';
import { expiredSupplementIds, findApplication, nextSupplementExpiry } from './queries.js';
import { decide } from './decisions.js';

/** Supplements expired per run (a bound on one batch). */
const expiryBatchMax = 100;

/** Supplement work orders that expire (application `failed`, fee refunded, no card), on the merchant's clock. */
export const supplementExpiryProcess: TimedProcess = {
  name: 'card.supplement_expiry',
  nextDue: nextSupplementExpiry,
  async runDue(ctx, scope, now) {
    const due = await expiredSupplementIds(ctx.db, scope, now, expiryBatchMax);
    for (const { id } of due) {
      await ctx.db.transaction().execute(async (trx) => {
        const app = await findApplication(trx, scope, id, true);
        if (app?.status === 'need_docs' && app.supplement_status === 'pending') await decide(ctx, trx, app, 'expired');
      });
    }
  },
};
