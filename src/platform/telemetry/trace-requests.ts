import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../http/app-instance.js';
import { spanKind, statusError, type Api } from './spans.js';

/**
 * The listener's server spans: one per request, named by its route (`POST /v1/deposits`),
 * continuing a W3C `traceparent` when the caller sent one, and made the active context of the
 * request's hooks and handler (so statements, upstream calls and log lines made for the request
 * join its trace). Ended with the status, the merchant, its environment and key. A route that
 * reads nothing of the request (`readsNoInput`: /healthz, probed by load balancers) gets none.
 */
export function traceRequests(api: Api, tracer: Tracer, app: AppInstance): void {
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
