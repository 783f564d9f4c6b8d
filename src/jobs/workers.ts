import type { ServiceContext } from '../service-context.js';
import { JobRunner } from './runner.js';
import type { BatchQueue, JobHandlers, Ticker } from './types.js';
import { reportFailure } from './failures.js';
import { Pacer, pacedDb } from '../db/pacing.js';

/** A ticker run's longest stretch without a turn of the event loop before its next transaction, in milliseconds. */
export const tickerSliceMs = 5;

export interface Workers {
  jobs: JobRunner;
  /** Runs every ticker once now (tests). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** Job handlers by kind (src/background.ts assembles the service's). */
  handlers: JobHandlers;
  /** Periodic work (src/background.ts assembles the service's). */
  tickers: readonly Ticker[];
  /** Queues claimed in batches from an area's own table (src/background.ts assembles the service's); the job runner
   * polls them. */
  batchQueues?: readonly BatchQueue[];
}

/**
 * The job runner and the tickers. With `start: false` nothing runs by itself (tests drive them).
 * A ticker run that throws is logged and counted (`reportFailure`); its attempt is the number of
 * its runs that have failed in a row.
 */
export function createWorkers(ctx: ServiceContext, start: boolean, options: WorkerOptions): Workers {
  const tickers = options.tickers;
  const jobs = new JobRunner(
    ctx,
    options.handlers,
    {
      pollIntervalMs: ctx.config.jobPollIntervalMs,
      leaseSeconds: ctx.config.jobLeaseSeconds,
      concurrencyMax: ctx.config.jobConcurrencyMax,
    },
    options.batchQueues ?? [],
  );
  const inFlight = new Map<string, Promise<void>>();
  const failingRuns = new Map<string, number>();
  const runTicker = (t: Ticker) => {
    const existing = inFlight.get(t.name);
    if (existing) return existing;
    // Paced like the sandbox clock's advance (db/pacing.ts): a ticker that finds much due (a
    // sandbox merchant's work left past an advance's bound) lets the other requests run between its transactions.
    const run = t
      .run({ ...ctx, db: pacedDb(ctx.db, new Pacer(tickerSliceMs)) })
      .then(
        () => {
          failingRuns.delete(t.name);
          ctx.metrics.jobRuns.inc({ job: t.name, outcome: 'ok' });
        },
        (err: unknown) => {
          const attempt = (failingRuns.get(t.name) ?? 0) + 1;
          failingRuns.set(t.name, attempt);
          ctx.metrics.jobRuns.inc({ job: t.name, outcome: 'error' });
          reportFailure(
            ctx,
            { job: t.name, attempt },
            err,
            `background ticker failed (${attempt} in a row); it runs again in ${t.intervalMs} ms`,
          );
        },
      )
      .finally(() => inFlight.delete(t.name));
    inFlight.set(t.name, run);
    return run;
  };
  const timers: NodeJS.Timeout[] = [];
  if (start) {
    jobs.start();
    for (const t of tickers) {
      const timer = setInterval(() => void runTicker(t), t.intervalMs);
      timer.unref();
      timers.push(timer);
    }
  }
  return {
    jobs,
    async tick() {
      await Promise.all(tickers.map(runTicker));
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      await jobs.stop();
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}
