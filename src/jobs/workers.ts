import type { ServiceContext } from '../service-context.js';
import { JobRunner } from './runner.js';
import { jobHandlers, tickers } from './registry.js';

export interface Workers {
  jobs: JobRunner;
  /** Runs every ticker once now (tests). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** The job runner and the tickers. With `start: false` nothing runs by itself (tests drive them). */
export function createWorkers(ctx: ServiceContext, start: boolean): Workers {
  const jobs = new JobRunner(ctx, jobHandlers, { pollIntervalMs: ctx.config.jobPollIntervalMs, leaseSeconds: ctx.config.jobLeaseSeconds });
  const inFlight = new Map<string, Promise<void>>();
  const runTicker = (t: (typeof tickers)[number]) => {
    const existing = inFlight.get(t.name);
    if (existing) return existing;
    const run = t
      .run(ctx)
      .then(() => ctx.metrics.jobRuns.inc({ job: t.name, outcome: 'ok' }))
      .catch(() => ctx.metrics.jobRuns.inc({ job: t.name, outcome: 'error' }))
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
