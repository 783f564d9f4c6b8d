import type { TimedProcess } from '../../../jobs/types.js';
import { liftActivationLocks, nextActivationUnlock } from './queries.js';

/** Activation locks that end, on the merchant's clock. */
export const activationUnlockProcess: TimedProcess = {
  name: 'card.activation_unlock',
  nextDue: (db, scope) => nextActivationUnlock(db, scope),
  runDue: (ctx, scope, now) => liftActivationLocks(ctx.db, scope, now),
};
