import { sql } from 'kysely';
import type { TimedProcess } from '../../../jobs/types.js';
import { liftActivationLocks } from './service.js';

/** Activation locks that end, on the merchant's clock. */
export const activationUnlockProcess: TimedProcess = {
  name: 'card.activation_unlock',
  async nextDue(db, scope) {
    const row = await db
      .selectFrom('cards')
      .select(sql<Date | null>`min(locked_until)`.as('due'))
      .where('merchant_id', '=', scope.merchantId)
      .where('environment', '=', scope.environment)
      .where('locked_until', 'is not', null)
      .executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  runDue: (ctx, scope, now) => liftActivationLocks(ctx.db, scope, now),
};
