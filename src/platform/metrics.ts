import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'listener' | 'method' | 'route' | 'status'>;
  jobRuns: Counter<'job' | 'outcome'>;
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
    help: 'Background job runs by job and outcome',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  return { registry, httpDuration, jobRuns };
}
