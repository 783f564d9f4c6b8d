import type { JobHandler, Ticker, TimedProcess } from '../../jobs/types.js';
import { attemptDue, deliverHandler, nextAttemptDue } from './delivery.js';
import { deliverJobKind, fanOutBatch, recoverOverdue } from './fan-out.js';

/** Job handlers of the module, listed in src/background.ts. */
export const webhookJobHandlers: Record<string, JobHandler> = { [deliverJobKind]: deliverHandler };

/** Tickers of the module: fan-out every 250 ms (one batch of at most 500 events), recovery every minute. */
export const webhookTickers: Ticker[] = [
  { name: 'webhook-fanout', intervalMs: 250, run: async (ctx) => void (await fanOutBatch(ctx.db)) },
  { name: 'webhook-recovery', intervalMs: 60_000, run: async (ctx) => void (await recoverOverdue(ctx.db)) },
];

/**
 * Timed processes of the module (docs/clock.md): a delivery's next attempt is due at its
 * `next_attempt_at` on the merchant's clock, so advancing a sandbox clock past it sends it.
 */
export const webhookTimedProcesses: TimedProcess[] = [
  { name: 'webhook.retry', nextDue: nextAttemptDue, runDue: attemptDue },
];
