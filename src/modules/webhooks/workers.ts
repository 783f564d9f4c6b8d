import type { JobHandler, Ticker } from '../../jobs/types.js';
import { deliverHandler } from './delivery.js';
import { deliverJobKind, fanOutBatch, recoverOverdue } from './fan-out.js';

/** Job handlers of the module, listed in src/background.ts. */
export const webhookJobHandlers: Record<string, JobHandler> = { [deliverJobKind]: deliverHandler };

/** Tickers of the module: fan-out every 250 ms (one batch of at most 500 events), recovery every minute. */
export const webhookTickers: Ticker[] = [
  { name: 'webhook-fanout', intervalMs: 250, run: async (ctx) => void (await fanOutBatch(ctx.db)) },
  { name: 'webhook-recovery', intervalMs: 60_000, run: async (ctx) => void (await recoverOverdue(ctx.db)) },
];
