import { sql } from 'kysely';
import type { TimedProcess } from '../../../jobs/types.js';
import { findApplication } from './queries.js';
import { decide } from './service.js';

/** Supplements expired per run (a bound on one batch). */
const expiryBatchMax = 100;

/** Supplement work orders that expire (application `failed`, fee refunded, no card), on the merchant's clock. */
export const supplementExpiryProcess: TimedProcess = {
  name: 'card.supplement_expiry',
  async nextDue(db, scope) {
    const row = await db
      .selectFrom('card_applications')
      .select(sql<Date | null>`min(supplement_expires_at)`.as('due'))
      .where('merchant_id', '=', scope.merchantId)
      .where('environment', '=', scope.environment)
      .where('status', '=', 'need_docs')
      .where('supplement_status', '=', 'pending')
      .executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  async runDue(ctx, scope, now) {
    const due = await ctx.db
      .selectFrom('card_applications')
      .select('id')
      .where('merchant_id', '=', scope.merchantId)
      .where('environment', '=', scope.environment)
      .where('status', '=', 'need_docs')
      .where('supplement_status', '=', 'pending')
      .where('supplement_expires_at', '<=', now)
      .orderBy('supplement_expires_at')
      .limit(expiryBatchMax)
      .execute();
    for (const { id } of due) {
      await ctx.db.transaction().execute(async (trx) => {
        const app = await findApplication(trx, scope, id, true);
        if (app?.status === 'need_docs' && app.supplement_status === 'pending') await decide(ctx, trx, app, 'expired');
      });
    }
  },
};
