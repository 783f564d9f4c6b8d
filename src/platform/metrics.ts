import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Outcomes of one background run: done, deferred by `RetryLater`, failed with attempts left, failed for the last time. */
export type JobOutcome = 'ok' | 'later' | 'error' | 'dead';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'listener' | 'method' | 'route' | 'status'>;
  jobRuns: Counter<'job' | 'outcome'>;
  /** Every background failure (a job or ticker run that threw, or the runner's own database work), by job. */
  backgroundFailures: Counter<'job'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by listener, route pattern and status',
    labelNames: ['listener', 'method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const jobRuns = new Counter({
    name: 'background_job_runs_total',
    help: 'Background job and ticker runs by job and outcome (ok, later, error, dead)',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const backgroundFailures = new Counter({
    name: 'background_failures_total',
    help: 'Background failures by job: job and ticker runs that threw, and the job runner\'s own claim, release and record steps',
    labelNames: ['job'] as const,
    registers: [registry],
  });
  return { registry, httpDuration, jobRuns, backgroundFailures };
}
