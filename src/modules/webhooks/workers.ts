import type { BatchQueue, JobHandler, Ticker, TimedProcess } from '../../jobs/types.js';
import { attemptDue } from './delivery.js';
import { nextAttemptDue } from './queries/deliveries.js';
import { deliveryQueue } from './delivery-worker.js';
import { deliverJobKind, fanOut } from './fan-out.js';

/**
 * Job handlers of the module, listed in src/background.ts. Deliveries are no longer jobs (the
 * records are the queue: `webhookBatchQueues`); a `webhook.deliver` job an earlier version left
 * in the database ends at once, without effect: its record is delivered by the worker.
 */
export const webhookJobHandlers: Record<string, JobHandler> = { [deliverJobKind]: async () => {} };

/** Tickers of the module: fan-out every 250 ms (batches of at most 500 events until the outbox is empty, at most 8). */
export const webhookTickers: Ticker[] = [
  { name: 'webhook-fanout', intervalMs: 250, run: async (ctx) => void (await fanOut(ctx.db)) },
];

/** The delivery worker: due records claimed, sent and recorded in batches (delivery-worker.ts). */
export const webhookBatchQueues: BatchQueue[] = [deliveryQueue];

/**
 * Timed processes of the module (docs/clock.md): a delivery's next attempt is due at its
 * `next_attempt_at` on the merchant's clock, so advancing a sandbox clock past it sends it.
 */
export const webhookTimedProcesses: TimedProcess[] = [
  { name: 'webhook.retry', nextDue: nextAttemptDue, runDue: attemptDue },
];
