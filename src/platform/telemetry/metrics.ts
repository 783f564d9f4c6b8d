import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/** A metric line as prom-client's registry reads it from a metric's `get()` / `getForPromString()`. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

interface ExportedMetric {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: ExportedValue[];
}

/** Outcomes of one background run: done, deferred by `RetryLater`, failed with attempts left, failed for the last time.
 * */
export type JobOutcome = 'ok' | 'later' | 'error' | 'dead';

export interface Metrics {
  registry: Registry;
  httpDuration: LatencyHistogram;
  jobRuns: Counter<'job' | 'outcome'>;
  /** Every background failure (a job or ticker run that threw, or the runner's own database work), by job. */
  backgroundFailures: Counter<'job'>;
}

/** One label set of the latency histogram: counts per bucket (the last is +Inf), their sum and count. */
class Series {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * The HTTP latency histogram, by listener, method, route pattern and status: the series prom-client's
 * `Histogram` would export (same name, type, labels, buckets, `_bucket`/`_sum`/`_count` lines;
 * test/read-path.test.ts compares the two), registered as a custom metric of the registry. An
 * observation finds its series through three maps keyed by the strings a request already holds
 * (no label object, no label hash) and adds to plain numbers: prom-client's `observe` cost ~5 %
 * of a `/healthz` request (docs/performance.md).
 */
export class LatencyHistogram {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private series = new Map<string, Map<string, Map<string, Map<number, Series>>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[],
  ) {}

  observe(listener: string, method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(listener);
    if (!byMethod) this.series.set(listener, (byMethod = new Map()));
    let byRoute = byMethod.get(method);
    if (!byRoute) byMethod.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series)
      byStatus.set(status, (series = new Series({ listener, method, route, status: String(status) }, this.bounds)));
    series.observe(seconds);
  }

  /** The export as prom-client's `Histogram` gives it to the text format: each series' labels shared by its lines. */
  async getForPromString(): Promise<ExportedMetric> {
    const values: ExportedValue[] = [];
    const line = (
      labels: Record<string, string | number>,
      sharedLabels: Record<string, string>,
      value: number,
      metricName: string,
    ) => values.push({ labels, sharedLabels, value, metricName });
    for (const byMethod of this.series.values()) {
      for (const byRoute of byMethod.values()) {
        for (const byStatus of byRoute.values()) {
          for (const s of byStatus.values()) {
            let cumulative = 0;
            for (let i = 0; i < this.bounds.length; i++) {
              cumulative += s.counts[i]!;
              line({ le: this.bounds[i]! }, s.labels, cumulative, `${this.name}_bucket`);
            }
            line({ le: '+Inf' }, s.labels, s.count, `${this.name}_bucket`);
            line({}, s.labels, s.sum, `${this.name}_sum`);
            line({}, s.labels, s.count, `${this.name}_count`);
          }
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The export as prom-client's `Histogram.get()` (the JSON form): each line's labels in full. */
  async get(): Promise<ExportedMetric> {
    const metric = await this.getForPromString();
    metric.values = metric.values.map(({ labels, sharedLabels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return metric;
  }

  reset(): void {
    this.series = new Map();
  }
}

/** Default metrics of prom-client left out of /metrics (docs/configuration.md, "Metrics"). */
export const removedDefaultMetrics = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

export const httpDurationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client's sums of the handle, request and resource gauges are gauges named `_total`,
  // which Prometheus keeps for counters (promtool refuses them); the gauges by type stay
  // (`sum(nodejs_active_handles)` is the same number).
  for (const name of removedDefaultMetrics) registry.removeSingleMetric(name);
  const httpDuration = new LatencyHistogram(
    'http_request_duration_seconds',
    'HTTP request latency by listener, route pattern and status',
    httpDurationBuckets,
  );
  registry.registerMetric(httpDuration as unknown as Parameters<Registry['registerMetric']>[0]);
  const jobRuns = new Counter({
    name: 'background_job_runs_total',
    help: 'Background job and ticker runs by job and outcome (ok, later, error, dead)',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const backgroundFailures = new Counter({
    name: 'background_failures_total',
    help:
      "Background failures by job: job and ticker runs that threw, and the job runner's own claim, release and " +
      'record steps',
    labelNames: ['job'] as const,
    registers: [registry],
  });
  return { registry, httpDuration, jobRuns, backgroundFailures };
}
