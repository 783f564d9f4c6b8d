// Over 300 lines: OpenTelemetry behind one switch, tracer, spans of requests, batches and jobs (observability.md).
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from './app-instance.js';

/**
 * OpenTelemetry traces (docs/observability.md), on only when an OTLP endpoint is configured.
 *
 * Unset, nothing of OpenTelemetry is loaded: `tracing()` answers undefined and every hook-in
 * (the listeners' hooks, the database pool, the job runner, webhook and upstream calls) keeps its
 * plain path, one check at start-up or one `undefined` test per call, no allocation.
 *
 * Set, the official SDK is imported (dynamically: a production bundle keeps the packages external
 * and loads them only then) and configured from the standard variables, which it reads itself:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`. Spans are
 * made by hand in our own hooks, not by auto-instrumentation: that needs loader hooks a bundled
 * build does not run, and patches libraries on the hot path.
 */

/** The default `service.name` (`OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` override it). */
export const defaultServiceName = 'merchant-wallet-api';
/** A statement's text on its span is cut to this many characters (a group commit's statement runs to kilobytes). */
export const queryTextLengthMax = 4_096;

type Env = Record<string, string | undefined>;
/** A trace context held for later work (group commit); opaque outside this file. */
export type TraceContext = Context;

/** Tracing is on when an OTLP endpoint is set and the SDK is not disabled (`OTEL_SDK_DISABLED=true`,
 * `OTEL_TRACES_EXPORTER=none`). */
export function tracingConfigured(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

type Api = typeof import('@opentelemetry/api');
type Provider = import('@opentelemetry/sdk-trace-node').NodeTracerProvider;

/** A database client as Kysely's Postgres driver uses it (node-postgres, and the embedded adapter). */
interface QueryClient {
  query(text: string, values: unknown[]): Promise<unknown>;
  release(destroy?: boolean): void;
}

/** The spans' kinds we make (the API's `SpanKind` values without importing it). */
const spanKind = { internal: 0, server: 1, client: 2 } as const;
const statusError = 2;

/** The first word of a statement, its operation (`SELECT`, `INSERT`, `BEGIN`...): the span's name. */
function operationOf(text: string): string {
  const m = /^\s*([A-Za-z]+)/.exec(text);
  return m ? m[1]!.toUpperCase() : 'SQL';
}

function errorType(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | undefined;
  return typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'error';
}

/** Ends a span as failed by `err`. */
function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: statusError, message: err instanceof Error ? err.message.slice(0, 500) : undefined });
  span.end();
}

/** Started telemetry: what the hook-ins call. */
export class Tracing {
  private readonly tracer: Tracer;

  constructor(
    private readonly api: Api,
    private readonly provider: Provider,
  ) {
    this.tracer = api.trace.getTracer(defaultServiceName);
  }

  /**
   * The listener's server spans: one per request, named by its route (`POST /v1/deposits`),
   * continuing a W3C `traceparent` when the caller sent one, and made the active context of the
   * request's hooks and handler (so statements, upstream calls and log lines made for the request
   * join its trace). Ended with the status, the merchant, its environment and key. A route that
   * reads nothing of the request (`readsNoInput`: /healthz, probed by load balancers) gets none.
   */
  instrumentHttp(app: AppInstance): void {
    const { api, tracer } = this;
    const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
    app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      if (req.routeOptions.config?.readsNoInput) return done();
      const route = req.routeOptions.url;
      const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
      const attributes: Attributes = {
        'http.request.method': req.method,
        'mwa.request_id': req.id,
      };
      if (route !== undefined) attributes['http.route'] = route;
      const span = tracer.startSpan(
        route === undefined ? req.method : `${req.method} ${route}`,
        { kind: spanKind.server, attributes },
        parent,
      );
      const context = api.trace.setSpan(parent, span);
      spans.set(req, { span, context });
      api.context.with(context, done);
    });
    // The body is read on the socket's own events: the request's context is entered again after it.
    app.addHook('preValidation', (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      const held = spans.get(req);
      if (held === undefined) return done();
      api.context.with(held.context, done);
    });
    // First of the answer's hooks: what runs after it (the request's log line) sees the trace.
    app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const held = spans.get(req);
      if (held === undefined) return done();
      spans.delete(req);
      const { span } = held;
      const status = reply.statusCode;
      span.setAttribute('http.response.status_code', status);
      const auth = req.auth;
      if (auth !== undefined) {
        span.setAttribute('mwa.merchant_id', auth.merchantId);
        span.setAttribute('mwa.environment', auth.environment);
        span.setAttribute('mwa.api_key_id', auth.keyId);
      }
      if (req.member !== undefined) span.setAttribute('mwa.member_id', req.member.id);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: statusError });
      }
      span.end();
      api.context.with(held.context, done);
    });
    app.addHook('onRequestAbort', (req: FastifyRequest, done: () => void) => {
      const held = spans.get(req);
      if (held === undefined) return done();
      spans.delete(req);
      held.span.setAttribute('error.type', 'aborted');
      held.span.setStatus({ code: statusError, message: 'the client closed the connection before the answer' });
      held.span.end();
      done();
    });
  }

  /** Marks a span failed without an exception (an answer that is not a success): `error.type` and the error status. */
  markFailed(span: Span, type: string, message?: string): void {
    span.setAttribute('error.type', type);
    span.setStatus({ code: statusError, message });
  }

  /** pino's `mixin`: the active span's trace and span id on every line logged within a trace. */
  readonly logMixin = (): Record<string, string> => {
    const span = this.api.trace.getSpan(this.api.context.active());
    if (span === undefined) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  };

  /**
   * A span per statement the pool's connections run, as a child of the active span while it is
   * open. A statement outside any trace (the workers' polls, every 250 ms) makes none: alone it
   * says nothing, and would bury the traces that do.
   */
  traceStatements<P extends { connect(): Promise<QueryClient> }>(pool: P, embedded: boolean): P {
    const connect = pool.connect.bind(pool);
    const wrappers = new WeakMap<QueryClient, QueryClient>();
    pool.connect = async () => {
      const client = await connect();
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = {
          query: (text, values) => this.statement(client, text, values, embedded),
          release: (destroy) => client.release(destroy),
        };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    };
    return pool;
  }

  private statement(client: QueryClient, text: string, values: unknown[], embedded: boolean): Promise<unknown> {
    const parent = this.api.context.active();
    // Not recording: no trace, or one not sampled, or one that has ended (a buffer's flush timer set
    // during a request runs in that request's context long after its answer: api-call-log.ts).
    if (typeof text !== 'string' || !this.api.trace.getSpan(parent)?.isRecording()) return client.query(text, values);
    const operation = operationOf(text);
    const span = this.tracer.startSpan(
      operation,
      {
        kind: spanKind.client,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          // Parameterised: values travel apart and are never on the span.
          'db.query.text': text.length > queryTextLengthMax ? text.slice(0, queryTextLengthMax) : text,
          'mwa.db.embedded': embedded,
        },
      },
      parent,
    );
    return client.query(text, values).then(
      (result) => {
        span.end();
        return result;
      },
      (err: unknown) => {
        failSpan(span, err);
        throw err;
      },
    );
  }

  /**
   * Runs `fn` in a span of its own (a child of the active one, or a new trace), the active span
   * while it runs. Failed when `fn` throws; `fn` may add attributes and a status to the span.
   */
  async inSpan<T>(
    name: string,
    kind: 'internal' | 'client',
    attributes: Attributes,
    fn: (span: Span) => Promise<T>,
  ): Promise<T> {
    const { api } = this;
    const span = this.tracer.startSpan(name, { kind: spanKind[kind], attributes });
    try {
      const result = await api.context.with(api.trace.setSpan(api.context.active(), span), () => fn(span));
      span.end();
      return result;
    } catch (err) {
      failSpan(span, err);
      throw err;
    }
  }

  /** The active context when it is within a trace (to run later work in it: `inBatchSpan`). */
  activeContext(): TraceContext | undefined {
    const context = this.api.context.active();
    return this.api.trace.getSpan(context)?.isRecording() ? context : undefined;
  }

  /**
   * Runs `fn`, work done for several traces at once (a group commit's batch), in a span that is a
   * child of the first of `contexts` within a trace and links the others.
   */
  inBatchSpan<T>(
    name: string,
    attributes: Attributes,
    contexts: ReadonlyArray<TraceContext | undefined>,
    fn: () => Promise<T>,
  ): Promise<T> {
    const { api } = this;
    const traced = contexts.filter((c): c is TraceContext => c !== undefined);
    const parent = traced[0] ?? api.ROOT_CONTEXT;
    const links = traced.slice(1).map((c) => ({ context: api.trace.getSpanContext(c)! }));
    const span = this.tracer.startSpan(name, { kind: spanKind.internal, attributes, links }, parent);
    return api.context.with(api.trace.setSpan(parent, span), fn).then(
      (result) => {
        span.end();
        return result;
      },
      (err: unknown) => {
        failSpan(span, err);
        throw err;
      },
    );
  }

  /**
   * The adapter of one upstream with a client span around each of its calls (`upstream
   * remittance.submit`): the decorator of the upstream port, the adapters stay unaware of it.
   * Calls between an adapter's own methods are not spans of their own.
   */
  traceAdapter<T extends object>(upstream: string, adapter: T): T {
    // By the method itself, not its name: a method replaced on the adapter gets a wrapper of its own.
    const wrapped = new WeakMap<object, unknown>();
    const tracing = this;
    return new Proxy(adapter, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
        let wrapper = wrapped.get(value);
        if (wrapper === undefined) {
          const method = value as (...args: unknown[]) => unknown;
          wrapper = (...args: unknown[]) => tracing.upstreamCall(upstream, property, () => method.apply(target, args));
          wrapped.set(value, wrapper);
        }
        return wrapper;
      },
    });
  }

  private upstreamCall(upstream: string, operation: string, call: () => unknown): unknown {
    const { api } = this;
    const span = this.tracer.startSpan(`upstream ${upstream}.${operation}`, {
      kind: spanKind.client,
      attributes: { 'mwa.upstream': upstream, 'mwa.upstream.operation': operation },
    });
    let result: unknown;
    try {
      result = api.context.with(api.trace.setSpan(api.context.active(), span), call);
    } catch (err) {
      failSpan(span, err);
      throw err;
    }
    if (result === null || typeof (result as { then?: unknown })?.then !== 'function') {
      span.end();
      return result;
    }
    return (result as Promise<unknown>).then(
      (value) => {
        // The ports answer an unknown outcome as a value, not a throw (deadline.ts).
        const kind = (value as { kind?: unknown } | null)?.kind;
        if (kind === 'timeout' || kind === 'unknown') span.setAttribute('mwa.upstream.outcome', kind);
        span.end();
        return value;
      },
      (err: unknown) => {
        failSpan(span, err);
        throw err;
      },
    );
  }

  /** Exports what is buffered and stops the exporter. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

let started: Tracing | undefined;

/** The started telemetry, or undefined when tracing is off (the hook-ins' one check). */
export function tracing(): Tracing | undefined {
  return started;
}

const diagLevels = ['none', 'error', 'warn', 'info', 'debug', 'verbose', 'all'] as const;

/**
 * Starts tracing when `tracingConfigured(env)`; otherwise does nothing and loads nothing. Call it
 * before the service is started (the database pool, the loggers and the listeners ask `tracing()`
 * when they are made). Answers whether tracing is on.
 */
export async function startTelemetry(env: Env): Promise<boolean> {
  if (started !== undefined) return true;
  if (!tracingConfigured(env)) return false;
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources, semconv] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  // The SDK's own complaints (an unreachable collector), on stderr; `OTEL_LOG_LEVEL` as the spec names it.
  const level = (env.OTEL_LOG_LEVEL?.trim().toLowerCase() ?? 'error') as (typeof diagLevels)[number];
  const diagLevel = {
    none: api.DiagLogLevel.NONE,
    error: api.DiagLogLevel.ERROR,
    warn: api.DiagLogLevel.WARN,
    info: api.DiagLogLevel.INFO,
    debug: api.DiagLogLevel.DEBUG,
    verbose: api.DiagLogLevel.VERBOSE,
    all: api.DiagLogLevel.ALL,
  }[diagLevels.includes(level) ? level : 'error'];
  api.diag.setLogger(new api.DiagConsoleLogger(), diagLevel);
  // Ours first, then what the environment says (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: defaultServiceName }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    // The exporter reads the endpoint, its headers, timeout and compression from OTEL_EXPORTER_OTLP_*.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The global provider, the AsyncLocalStorage context manager and the W3C propagators.
  provider.register();
  started = new Tracing(api, provider);
  return true;
}

/**
 * Flushes the spans still buffered to the collector and stops tracing: the global provider,
 * context manager and propagator are unregistered, so `tracing()` answers undefined again.
 */
export async function shutdownTelemetry(): Promise<void> {
  const t = started;
  if (t === undefined) return;
  started = undefined;
  try {
    await t.shutdown();
  } finally {
    const api = await import('@opentelemetry/api');
    api.trace.disable();
    api.context.disable();
    api.propagation.disable();
    api.diag.disable();
  }
}
