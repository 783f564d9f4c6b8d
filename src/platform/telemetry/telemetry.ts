import { defaultServiceName, Tracing } from './tracing.js';

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

type Env = Record<string, string | undefined>;

/** Tracing is on when an OTLP endpoint is set and the SDK is not disabled (`OTEL_SDK_DISABLED=true`,
 * `OTEL_TRACES_EXPORTER=none`). */
export function tracingConfigured(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
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
