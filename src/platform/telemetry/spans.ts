import type { Context, Span } from '@opentelemetry/api';

/** What the span makers share (tracing.ts, trace-requests.ts): the API's types, span kinds, a failed span's end. */

export type Api = typeof import('@opentelemetry/api');
/** A trace context held for later work (group commit); opaque outside the telemetry files. */
export type TraceContext = Context;

/** The spans' kinds we make (the API's `SpanKind` values without importing it). */
export const spanKind = { internal: 0, server: 1, client: 2 } as const;
export const statusError = 2;

function errorType(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | undefined;
  return typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'error';
}

/** Ends a span as failed by `err`. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: statusError, message: err instanceof Error ? err.message.slice(0, 500) : undefined });
  span.end();
}

/**
 * Ends `span` when `pending` settles, as failed when it rejects; `settled` sees a value first (to
 * add what it says to the span). Answers what `pending` answers.
 */
export function endWhenSettled<T>(span: Span, pending: Promise<T>, settled?: (value: T) => void): Promise<T> {
  return pending.then(
    (value) => {
      settled?.(value);
      span.end();
      return value;
    },
    (err: unknown) => {
      failSpan(span, err);
      throw err;
    },
  );
}
