import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { AppInstance } from '../http/app-instance.js';
import { endWhenSettled, failSpan, spanKind, statusError, type Api, type TraceContext } from './spans.js';
import { traceRequests } from './trace-requests.js';

/** The default `service.name` (`OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` override it). */
export const defaultServiceName = 'merchant-wallet-api';
/** A statement's text on its span is cut to this many characters (a group commit's statement runs to kilobytes). */
export const queryTextLengthMax = 4_096;

type Provider = import('@opentelemetry/sdk-trace-node').NodeTracerProvider;

/** A database client as Kysely's Postgres driver uses it (node-postgres, and the embedded adapter). */
interface QueryClient {
  query(text: string, values: unknown[]): Promise<unknown>;
  release(destroy?: boolean): void;
}

/** The first word of a statement, its operation (`SELECT`, `INSERT`, `BEGIN`...): the span's name. */
function operationOf(text: string): string {
  const m = /^\s*([A-Za-z]+)/.exec(text);
  return m ? m[1]!.toUpperCase() : 'SQL';
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

  /** The listener's server spans, one per request (trace-requests.ts). */
  instrumentHttp(app: AppInstance): void {
    traceRequests(this.api, this.tracer, app);
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
    return endWhenSettled(span, client.query(text, values));
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
    return endWhenSettled(span, api.context.with(api.trace.setSpan(parent, span), fn));
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
    return endWhenSettled(span, result as Promise<unknown>, (value) => {
      // The ports answer an unknown outcome as a value, not a throw (deadline.ts).
      const kind = (value as { kind?: unknown } | null)?.kind;
      if (kind === 'timeout' || kind === 'unknown') span.setAttribute('mwa.upstream.outcome', kind);
    });
  }

  /** Exports what is buffered and stops the exporter. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
