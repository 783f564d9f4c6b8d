/**
 * Quote-lock expiry: a locked quote unused when its window ends becomes `expired` (no money
 * moves). A timed process (so `POST /v1/sandbox/clock/advance` runs it on the merchant's clock)
 * and a ticker (production and every merchant's own time), with the same claim.
 */
import type { ServiceContext } from '../../service-context.js';
import type { Ticker, TimedProcess } from '../../jobs/types.js';
import { expireQuotes, nextQuoteExpiry } from './queries.js';
import { emitExpired, expiryBatchMax as batchMax } from './service.js';

export const quoteExpiryProcess: TimedProcess = {
  name: 'exchange.quote_expiry',
  nextDue: (db, scope) => nextQuoteExpiry(db, scope),
  async runDue(ctx, scope, now) {
    for (;;) {
      const n = await ctx.db.transaction().execute(async (trx) => {
        const rows = await expireQuotes(trx, batchMax, scope, now);
        await emitExpired(trx, rows);
        return rows.length;
      });
      if (n < batchMax) return;
    }
  },
};

export const exchangeTimedProcesses: TimedProcess[] = [quoteExpiryProcess];

export const exchangeTickers: Ticker[] = [{
  name: 'exchange.quote_expiry',
  intervalMs: 5_000,
  async run(ctx: ServiceContext) {
    await ctx.db.transaction().execute(async (trx) => emitExpired(trx, await expireQuotes(trx, batchMax)));
  },
}];
