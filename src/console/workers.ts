import type { Ticker } from '../jobs/types.js';
import { deleteStaleRows } from './queries/sessions.js';
import { accountWindowSeconds } from './rules.js';

/**
 * Housekeeping of the console's tables: sessions past either timeout that no browser came back
 * with (a returning one is deleted on the spot), and sign-in failures older than the throttle's
 * longest window (an account's, 24 hours). Real time, like the sessions themselves.
 */
export const consoleCleanupTicker: Ticker = {
  name: 'console.cleanup',
  intervalMs: 10 * 60_000,
  async run(ctx) {
    await deleteStaleRows(ctx.db, ctx.clock.real(), {
      idleSeconds: ctx.config.consoleSessionIdleSeconds,
      maxSeconds: ctx.config.consoleSessionMaxSeconds,
      failureWindowSeconds: accountWindowSeconds,
    });
  },
};

export const consoleTickers: Ticker[] = [consoleCleanupTicker];
