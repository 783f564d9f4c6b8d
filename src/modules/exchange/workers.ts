/**
 * Quote-lock expiry: a locked quote unused when its window ends becomes `expired` (no money
 * moves). A timed process (so `POST /v1/sandbox/clock/advance` runs it on the merchant's clock)
 * and a ticker (production and every merchant's own time), with the same claim.
 */
import type { ServiceContext } from '../../service-context.js';
import type { Ticker, TimedProcess } from '../../jobs/types.js';
import { nextQuoteExpiry } from './queries.js';
import { expireLocks, expiryBatchMax } from './reads.js';

export const quoteExpiryProcess: TimedProcess = {
  name: 'exchange.quote_expiry',
  nextDue: (db, scope) => nextQuoteExpiry(db, scope),
  async runDue(ctx, scope, now) {
    // A full batch may leave more due locks behind it.
    for (;;) if ((await expireLocks(ctx, { scope, now })) < expiryBatchMax) return;
  },
};

export const exchangeTimedProcesses: TimedProcess[] = [quoteExpiryProcess];

export const exchangeTickers: Ticker[] = [
  {
    name: 'exchange.quote_expiry',
    intervalMs: 5_000,
    async run(ctx: ServiceContext) {
      await expireLocks(ctx);
    },
  },
];
