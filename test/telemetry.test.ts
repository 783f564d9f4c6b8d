import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { RunningService } from '../src/server.js';
import { enqueue } from '../src/jobs/queries.js';
import { JobRunner } from '../src/jobs/runner.js';
import { loggerOptions } from '../src/platform/telemetry/request-log.js';
import { shutdownTelemetry, startTelemetry, tracing, tracingConfigured } from '../src/platform/telemetry/telemetry.js';
import { pumpWebhooks, startReceiver } from './support/webhook-receiver.js';
import { baseUrlFor, newMerchantClient, startTestService } from './support/service.js';
import { fundedMember } from './support/fixtures.js';
import { openSse } from './support/sse.js';

/**
 * Traces (docs/observability.md): with an OTLP endpoint set, spans of the requests, their
 * statements, upstream calls, webhook deliveries and jobs reach a collector, here a small OTLP/HTTP
 * receiver (the JSON exporter); with none, nothing of the SDK is loaded.
 */

/** The SDK's packages loaded in this process (they are CommonJS: every one lands in require's cache). The API alone
 * comes with prom-client. */
function sdkModulesLoaded(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    /node_modules[\\/]@opentelemetry[\\/](?!api[\\/])/.test(path),
  );
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: AnyValue }>;
  status?: { code?: number };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  statusCode: number;
  service: string | undefined;
}

const valueOf = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));

/** The spans of every OTLP/HTTP JSON export the receiver got. */
function spansOf(bodies: string[]): Span[] {
  const spans: Span[] = [];
  for (const body of bodies) {
    for (const rs of JSON.parse(body).resourceSpans ?? []) {
      const service = (rs.resource?.attributes ?? []).find((a: { key: string }) => a.key === 'service.name')?.value
        .stringValue;
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans as OtlpSpan[]) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)])),
            statusCode: s.status?.code ?? 0,
            service,
          });
        }
      }
    }
  }
  return spans;
}

// OTLP's SpanKind numbering (the API's plus one).
const kindServer = 2;
const kindClient = 3;

interface LogLine {
  msg: string;
  trace_id?: string;
  span_id?: string;
}

describe('telemetry', () => {
  it(
    'with no OTLP endpoint set, nothing of the SDK is loaded, no provider is registered, the log has no trace ' +
      'mixin',
    async () => {
      assert.equal(tracingConfigured({}), false);
      assert.equal(
        tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
        false,
      );
      assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }), true);
      assert.equal(await startTelemetry({ OTEL_SERVICE_NAME: 'x' }), false);
      assert.equal(tracing(), undefined);
      assert.equal('mixin' in loggerOptions('info'), false);
      const service = await startTestService({});
      try {
        const { client } = await newMerchantClient(service);
        await client.members.create({ external_member_id: 'untraced' });
      } finally {
        await service.close();
      }
      assert.deepEqual(sdkModulesLoaded(), []);
      assert.equal(
        (globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')],
        undefined,
        'no global tracer provider',
      );
    },
  );

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let collector: Awaited<ReturnType<typeof startReceiver>>;
    let hooks: Awaited<ReturnType<typeof startReceiver>>;
    let service: RunningService;
    const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, name: process.env.OTEL_SERVICE_NAME };
    const lines: LogLine[] = [];
    let spans: Span[] = [];
    const traceparentTrace = randomUUID().replaceAll('-', '');
    let merchantId = '';

    before(async () => {
      collector = await startReceiver();
      hooks = await startReceiver();
      // Read by the SDK's exporter and resource detector themselves, as in production.
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${collector.port}`;
      process.env.OTEL_SERVICE_NAME = 'mwa-telemetry-test';
      assert.equal(await startTelemetry(process.env), true);
      assert.notDeepEqual(
        sdkModulesLoaded(),
        [],
        'the SDK is loaded once an endpoint is set (the check above can see it)',
      );
      // The background log as the service makes it (the listeners' options), made once tracing is on.
      const log = Fastify({
        logger: { ...loggerOptions('info'), stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
      }).log;
      service = await startTestService({ log });

      const setup = await newMerchantClient(service);
      merchantId = setup.merchantId;
      const { client } = setup;
      await client.webhooks.createEndpoint({ url: hooks.url(), event_types: ['*'] });
      await fundedMember(client, '10', 'USDT', { external: 'traced' });
      await client.merchant.requestDepositAddress({ asset: 'USDT', network: 'TRON' });
      await pumpWebhooks(service, () => hooks.received.length >= 1);
      // An event stream held for a few of the feed's polls (every 500 ms) and a lease renewal's turn.
      const sse = await openSse(baseUrlFor(service, 'sandbox'), await client.getToken(), '/v1/events/stream');
      assert.equal(sse.status, 200);
      await new Promise((r) => setTimeout(r, 1_600));
      sse.close();
      await sse.ended;
      // A caller's W3C trace context is continued.
      const res = await fetch(`${service.publicUrl}/v1/openapi.json`, {
        headers: { traceparent: `00-${traceparentTrace}-00f067aa0ba902b7-01` },
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.equal((await fetch(`${service.publicUrl}/healthz`)).status, 200);
      // A job, through the runner, that reads the database and logs.
      const runner = new JobRunner(service.ctx, {
        'test.traced': async (_job, ctx) => {
          await ctx.db.selectFrom('merchants').select('id').limit(1).execute();
          ctx.log.info('traced job ran');
        },
      });
      await enqueue(service.ctx.db, { kind: 'test.traced', payload: { merchant_id: merchantId } });
      await runner.drain();
      await runner.stop();
      await service.close();
      // Shutdown exports what is still buffered.
      await shutdownTelemetry();
      spans = spansOf(collector.received.filter((r) => r.path === '/v1/traces').map((r) => r.body));
    });
    after(async () => {
      await shutdownTelemetry();
      for (const [key, value] of [
        ['OTEL_EXPORTER_OTLP_ENDPOINT', saved.endpoint],
        ['OTEL_SERVICE_NAME', saved.name],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await collector?.close();
      await hooks?.close();
    });

    const named = (name: string) => spans.filter((s) => s.name === name);
    /** The first span named `name`, which must be there. */
    const firstNamed = (name: string): Span => {
      const [span] = named(name);
      assert.ok(span, `no span ${name}; spans: ${[...new Set(spans.map((s) => s.name))].join(', ')}`);
      return span;
    };
    const childrenOf = (parent: Span) =>
      spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);

    it(
      'exports JSON over OTLP/HTTP to /v1/traces, as the service named by OTEL_SERVICE_NAME; shutdown ' +
        'unregisters it',
      () => {
        assert.ok(collector.received.length > 0);
        for (const r of collector.received) {
          assert.equal(r.path, '/v1/traces');
          assert.match(String(r.headers['content-type']), /^application\/json/);
        }
        assert.ok(spans.length > 0);
        assert.ok(spans.every((s) => s.service === 'mwa-telemetry-test'));
        assert.equal(tracing(), undefined);
      },
    );

    it(
      'a server span per request, named by its route, with the method, route, status, request id, merchant and ' +
        'environment',
      () => {
        const create = firstNamed('POST /v1/members');
        assert.equal(create.kind, kindServer);
        assert.equal(create.attributes['http.request.method'], 'POST');
        assert.equal(create.attributes['http.route'], '/v1/members');
        assert.equal(create.attributes['http.response.status_code'], 201);
        assert.match(String(create.attributes['mwa.request_id']), /^req_/);
        assert.equal(create.attributes['mwa.merchant_id'], merchantId);
        assert.equal(create.attributes['mwa.environment'], 'sandbox');
        assert.ok(named('POST /v1/deposits').length === 1);
        assert.ok(named('POST /v1/connect/token').length >= 1);
      },
    );

    it('a statement is a child span of the request that ran it, with its parameterised text', () => {
      const token = firstNamed('POST /v1/connect/token');
      const statements = childrenOf(token).filter((s) => s.attributes['db.system.name'] === 'postgresql');
      assert.ok(statements.length > 0, 'the token exchange reads the key');
      for (const s of statements) {
        assert.equal(s.kind, kindClient);
        assert.equal(typeof s.attributes['db.query.text'], 'string');
        assert.equal(s.name, s.attributes['db.operation.name']);
      }
      assert.ok(statements.some((s) => /^select/i.test(String(s.attributes['db.query.text']))));
    });

    it("a group commit's batch is a span in its first request's trace, with the batch's statement", () => {
      const deposit = firstNamed('POST /v1/deposits');
      const [batch] = childrenOf(deposit).filter((s) => s.name === 'group commit');
      assert.ok(batch, 'the deposit was written by a batch');
      assert.equal(batch.attributes['mwa.batch.size'], 1);
      assert.ok(childrenOf(batch).some((s) => s.attributes['db.system.name'] === 'postgresql'));
    });

    it('an upstream call is a client span of the request that made it', () => {
      const request = firstNamed('POST /v1/merchant/deposit-address');
      const [call] = childrenOf(request).filter((s) => s.name === 'upstream chain.createDepositAddress');
      assert.ok(call, 'the chain provider was called');
      assert.equal(call.kind, kindClient);
      assert.equal(call.attributes['mwa.upstream'], 'chain');
    });

    it('a webhook delivery is a client span with the merchant, environment, event and answer', () => {
      const delivery = firstNamed('webhook delivery');
      assert.equal(delivery.kind, kindClient);
      assert.equal(delivery.attributes['mwa.merchant_id'], merchantId);
      assert.equal(delivery.attributes['mwa.environment'], 'sandbox');
      assert.equal(delivery.attributes['http.request.method'], 'POST');
      assert.equal(delivery.attributes['http.response.status_code'], 200);
      assert.equal(delivery.attributes['url.full'], hooks.url());
      assert.match(String(delivery.attributes['mwa.event.type']), /^[a-z_]+\.[a-z_.]+$/);
    });

    it(
      'a job run is a span with its kind and merchant, its statements are children, its log lines carry its ' + 'trace',
      () => {
        const job = firstNamed('job test.traced');
        assert.equal(job.attributes['mwa.job.kind'], 'test.traced');
        assert.equal(job.attributes['mwa.merchant_id'], merchantId);
        assert.ok(childrenOf(job).some((s) => /from "merchants"/.test(String(s.attributes['db.query.text']))));
        const line = lines.find((l) => l.msg === 'traced job ran');
        assert.ok(line);
        assert.equal(line.trace_id, job.traceId);
        assert.equal(line.span_id, job.spanId);
      },
    );

    it(
      "an event stream's trace holds its own reads, not the process's event feed (its polls of every " +
        "merchant's events)",
      () => {
        const stream = firstNamed('GET /v1/events/stream');
        const inTrace = spans
          .filter((s) => s.traceId === stream.traceId && s.attributes['db.system.name'] === 'postgresql')
          .map((s) => String(s.attributes['db.query.text']));
        assert.ok(
          inTrace.some((q) => /FROM events\s+WHERE merchant_id =/.test(q)),
          "the stream's own read is in its trace",
        );
        assert.deepEqual(
          inTrace.filter((q) => /SELECT merchant_id, environment, writer_xid/.test(q)),
          [],
          "the feed's polls (every merchant's events) are not",
        );
      },
    );

    it("a caller's traceparent is continued; /healthz, probed by load balancers, makes no span", () => {
      const doc = firstNamed('GET /v1/openapi.json');
      assert.equal(doc.traceId, traceparentTrace);
      assert.equal(doc.parentSpanId, '00f067aa0ba902b7');
      assert.deepEqual(named('GET /healthz'), []);
    });
  });
});
