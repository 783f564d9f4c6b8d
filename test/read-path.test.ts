import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { LatencyHistogram, httpDurationBuckets } from '../src/platform/telemetry/metrics.js';
import { requestIdGenerator } from '../src/platform/http/request-id.js';
import { Kysely, PostgresDialect } from 'kysely';
import { ownerAccountsBuilt, ownerAccountsSql } from '../src/modules/balances/queries.js';

/**
 * The cheap per-request parts of the pipeline (docs/performance.md, "Request pipeline"): the
 * latency histogram exports what prom-client's Histogram exported, and request ids keep their
 * shape and never repeat; the balances statement written once is the one the builder makes.
 */

describe('balances statement', () => {
  it('is the text the query builder compiles, with its parameters in order', () => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: {} as never }) });
    const built = ownerAccountsBuilt(db, 'sandbox', 'member', ['mem_x', 'mem_y']).compile();
    assert.equal(built.sql, ownerAccountsSql);
    assert.deepEqual(built.parameters, ['sandbox', 'member', ['mem_x', 'mem_y']]);
  });
});

describe('latency histogram', () => {
  const observations: Array<[string, string, string, number, number]> = [
    ['public', 'GET', '/healthz', 200, 0.0004],
    ['public', 'GET', '/healthz', 200, 0.003],
    ['public', 'GET', '/v1/balances', 200, 0.02],
    ['public', 'GET', '/v1/balances', 401, 0.001],
    ['public', 'POST', '/v1/members', 201, 7],
    ['public', 'GET', 'unmatched', 404, 0.0025],
    ['public', 'GET', '/healthz', 200, 0.6],
  ];

  function both() {
    const theirs = new Registry();
    const reference = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by listener, route pattern and status',
      labelNames: ['listener', 'method', 'route', 'status'] as const,
      buckets: httpDurationBuckets,
      registers: [theirs],
    });
    const ours = new Registry();
    const histogram = new LatencyHistogram(
      'http_request_duration_seconds',
      'HTTP request latency by listener, route pattern and status',
      httpDurationBuckets,
    );
    ours.registerMetric(histogram as never);
    for (const [listener, method, route, status, seconds] of observations) {
      reference.observe({ listener, method, route, status: String(status) }, seconds);
      histogram.observe(listener, method, route, status, seconds);
    }
    return { theirs, ours, histogram };
  }

  it('exports the lines prom-client exports (text format)', async () => {
    const { theirs, ours } = both();
    const lines = (text: string) => text.split('\n').sort();
    assert.deepEqual(lines(await ours.metrics()), lines(await theirs.metrics()));
  });

  it('exports the values prom-client exports (JSON form)', async () => {
    const { theirs, ours } = both();
    const values = (json: Array<{ values: Array<{ labels: object; value: number; metricName?: string }> }>) =>
      json[0]!.values.map((v) => JSON.stringify([v.metricName, v.labels, v.value])).sort();
    assert.deepEqual(
      values((await ours.getMetricsAsJSON()) as never),
      values((await theirs.getMetricsAsJSON()) as never),
    );
  });

  it('starts again empty after a reset', async () => {
    const { ours } = both();
    ours.resetMetrics();
    assert.doesNotMatch(await ours.metrics(), /_count/);
  });
});

describe('request ids', () => {
  it('are UUID-shaped after req_ and never repeat', () => {
    const next = requestIdGenerator();
    const seen = new Set<string>();
    for (let i = 0; i < 200_000; i++) {
      const id = next();
      assert.match(id, /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    assert.equal(seen.size, 200_000);
  });

  it('differ between generators (processes) from the first id', () => {
    const a = requestIdGenerator();
    const b = requestIdGenerator();
    assert.notEqual(a().slice(0, 28), b().slice(0, 28));
  });
});
