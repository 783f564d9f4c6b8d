import type { ServiceContext } from '../../service-context.js';
import type { BatchQueue, BatchWorker } from '../../jobs/types.js';
import { reportFailure } from '../../jobs/failures.js';
import { claimDue } from './queries/claims.js';
import { attemptLeaseMs, byEndpoint, recordFinished, sendToEndpoint, type Finished } from './delivery.js';
import { claiming, releaseLane } from './lanes.js';

/**
 * The background delivery worker of a process (a batch queue of the job runner): each poll claims
 * due records in one statement (within the process's bound and each endpoint's free lanes),
 * sends them at once, each endpoint's over its keep-alive pool, and hands each finished attempt
 * to a recorder that writes every outcome waiting in one statement (group commit: while one
 * batch is written, the next gathers). An attempt's lane (its endpoint's connection) is given
 * back when its request ends, its place in the process's bound when its outcome is written; each
 * makes the runner poll again.
 */

/** Attempts in flight in one process, over all endpoints. */
export const deliveriesInFlightMax = 256;
/** Records claimed per statement. */
export const claimBatchMax = 200;
/** Outcomes written per statement. */
export const recordBatchMax = 500;

export const deliveryQueue: BatchQueue = {
  name: 'webhook.deliver',
  create: (ctx, wake) => createDeliveryWorker(ctx, wake),
};

/** Writes finished attempts in batches, one statement at a time; resolves each when it is written (or given up). */
function createRecorder(ctx: ServiceContext) {
  const waiting: Array<{ finished: Finished; written: () => void }> = [];
  let writing = false;
  const writeAll = async () => {
    writing = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting.splice(0, recordBatchMax);
        await recordFinished(
          ctx,
          batch.map((b) => b.finished),
        );
        for (const b of batch) b.written();
      }
    } finally {
      writing = false;
    }
  };
  return (finished: Finished): Promise<void> =>
    new Promise((written) => {
      waiting.push({ finished, written });
      if (writing) return;
      writing = true;
      // After the answers already received are read (the I/O phase ends first): they join this
      // batch. The embedded database runs on this thread, so a write begun at the first answer
      // would hold the others back, and each would then be written alone.
      setImmediate(() => void writeAll());
    });
}

export function createDeliveryWorker(ctx: ServiceContext, wake: () => void): BatchWorker {
  const record = createRecorder(ctx);
  const leaseMs = attemptLeaseMs(ctx.config.webhookDeliveryTimeoutMs);
  let inFlight = 0;
  let stopped = false;
  let settledWaiters: Array<() => void> = [];
  const settle = () => {
    const waiters = settledWaiters;
    settledWaiters = [];
    for (const w of waiters) w();
  };
  // Polls asked for by ending requests wait for the I/O phase to end, for the same reason: one claim for all the lanes
  // it freed.
  let wakeScheduled = false;
  const wakeSoon = () => {
    if (wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      wake();
    });
  };
  const finish = async (f: Finished) => {
    // The connection is free: the endpoint's lane goes back now, the outcome is written with the next batch.
    releaseLane(f.attempt.endpoint_id);
    wakeSoon();
    await record(f);
    inFlight--;
    settle();
    wakeSoon();
  };
  const worker: BatchWorker = {
    async poll() {
      const free = Math.min(deliveriesInFlightMax - inFlight, claimBatchMax);
      if (stopped || free <= 0) return 0;
      let claimed;
      try {
        claimed = await claiming((lanes) => claimDue(ctx.db, { limit: free, lanes, leaseMs, skipLocked: true }));
      } catch (err) {
        reportFailure(
          ctx,
          { job: 'webhook.deliver', step: 'claim' },
          err,
          'webhook deliveries could not be claimed; the next poll tries again',
        );
        return 0;
      }
      inFlight += claimed.length;
      for (const group of byEndpoint(claimed)) void sendToEndpoint(ctx, group, finish);
      return claimed.length;
    },
    inFlight: () => inFlight,
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => settledWaiters.push(resolve))),
    async stop() {
      stopped = true;
      while (inFlight > 0) await worker.settled();
    },
  };
  return worker;
}
