// Over 300 lines: what every listener shares (request id, closing, body parsing, error envelope), in one place.
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppInstance } from './app-instance.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type DomainErrorMapper } from '../errors.js';
import { installPublicPipeline } from './pipeline.js';
import {
  findUnsafeRequestText,
  findUnsafeText,
  jsonDepthExceeds,
  jsonDepthMax,
  pathParamLengthMax,
  serializerCompiler,
  validatorCompiler,
} from './validation.js';
import { requestIdGenerator } from './request-id.js';
import { firstChecks, hooksOf } from '../routes/route-hooks.js';
import { installStrictResponseHook, strictSerializerCompiler, violationReporter } from './response-check.js';
import { requestTimeoutCheckMs } from '../config/config.js';
import { tracing } from '../telemetry/telemetry.js';
import { RequestLogController, loggerOptions, redactedPath, requestLogger } from '../telemetry/request-log.js';
import './request-context.js';

export type { AppInstance } from './app-instance.js';

const newRequestId = requestIdGenerator();

/**
 * Error envelope for anything thrown: our ApiErrors as they are, domain errors (the ledger's) by
 * the mapper the composition root gives (`ctx.mapDomainError`), everything else mapped, never leaked.
 */
export function installErrorHandling(app: AppInstance, mapDomainError: DomainErrorMapper = () => undefined): void {
  app.setErrorHandler((err: any, req, reply) => {
    let apiError: ApiError;
    const mapped = err instanceof ApiError ? undefined : mapDomainError(err);
    if (err instanceof ApiError) apiError = err;
    else if (mapped) apiError = mapped;
    else if (err.validation)
      apiError = new ApiError(
        'invalid_request',
        (
          `Invalid ${err.validationContext ?? 'request'}: ${err.validation[0]?.instancePath || ''} ` +
          `${err.validation[0]?.message ?? ''}`
        )
          .replace(/\s+/g, ' ')
          .trim(),
      );
    else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      apiError = new ApiError('invalid_request', 'The request body is too large.');
    else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)
      apiError = new ApiError('invalid_request');
    else {
      req.log.error({ err }, 'unhandled error');
      apiError = new ApiError('api_error');
    }
    // A refusal about the key itself (another body, a request with it in progress) is never the
    // key's result: the platform decides it, wherever it was found (idempotency.ts, an area's resume).
    if (req.idempotency && (apiError.code === 'idempotency_key_reused' || apiError.code === 'idempotency_in_progress'))
      req.idempotency.noStore = true;
    const body = apiError.body(req.id);
    // The reference's 429 example wraps the fields in `error`; both shapes are sent so either reader works.
    const payload = apiError.code === 'rate_limited' ? { ...body, error: body } : body;
    void reply.code(apiError.status).header('x-request-id', req.id).headers(apiError.headers).send(payload);
  });
  app.setNotFoundHandler((req, reply) => {
    void reply
      .code(404)
      .header('x-request-id', req.id)
      .send(new ApiError('not_found', 'No such endpoint.').body(req.id));
  });
}

/**
 * Errors the router meets before any hook runs (a path that is not valid percent-encoded UTF-8,
 * a path parameter longer than `pathParamLengthMax`): the envelope, like every other answer.
 */
function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `A path segment is longer than ${pathParamLengthMax} characters.`
      : err.code === 'FST_ERR_BAD_URL'
        ? 'The path is not valid percent-encoded UTF-8.'
        : 'The request is malformed.';
  const apiError = new ApiError('invalid_request', message);
  void reply.code(apiError.status).header('x-request-id', req.id).send(apiError.body(req.id));
}

/**
 * Requests Node's HTTP parser refuses (a NUL or control character in a header, headers over the
 * size limit, a broken request line) never reach Fastify: answered here with the envelope and a
 * fresh request id, then the connection is closed.
 */
function clientErrorHandler(
  this: { log: { debug: (o: object, m: string) => void; info: (o: object, m: string) => void } },
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newRequestId();
  // Never the error itself: Node's parser errors carry the raw bytes received (`rawPacket`), headers unredacted.
  const fields = {
    err: { code: err.code, message: err.message },
    reqId: requestId,
    remoteAddress: socket.remoteAddress,
  };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    this.log.info(fields, `request not received within REQUEST_TIMEOUT_MS; connection closed`);
  else this.log.debug(fields, 'client error');
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request headers are too large.'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request was not received in time.'
        : 'The request is not valid HTTP (a header or the request line is malformed).';
  const body = JSON.stringify(new ApiError('invalid_request', message).body(requestId));
  // Not after an answer already begun on this connection (a request answered before its body
  // had arrived, then cut by the timeout): a second status line would corrupt the stream.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    socket.write(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  }
  socket.destroy();
}

/**
 * Text that cannot reach the database unchanged (NUL, an unpaired surrogate) in a path parameter,
 * a query value or a header is refused before anything uses it: 400 `invalid_request`.
 */
function refuseUnsafeText(req: FastifyRequest): void {
  const where = findUnsafeRequestText({ params: req.params, query: req.query, headers: req.headers });
  if (where) throw new ApiError('invalid_request', `The ${where} contains a NUL character or an unpaired surrogate.`);
}

/**
 * Keeps the exact bytes received (the signature covers them) and parses JSON ourselves: nesting
 * deeper than `jsonDepthMax` is refused before JSON.parse, and a string (value or key) holding
 * NUL or an unpaired surrogate after it, so nothing later walks or stores such a body.
 */
export function installBodyParsing(app: AppInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer' },
    (req: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      req.rawBody = body;
      if (body.length === 0) return done(null, undefined);
      if (jsonDepthExceeds(body))
        return done(
          new ApiError(
            'invalid_request',
            `The request body nests arrays and objects deeper than ${jsonDepthMax} levels.`,
          ),
        );
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return done(new ApiError('invalid_request', 'The request body is not valid JSON.'));
      }
      const at = findUnsafeText(parsed);
      if (at !== undefined) {
        return done(
          new ApiError(
            'invalid_request',
            `The request body has a NUL character or an unpaired surrogate ` +
              `at ${at === '' ? 'its top level' : JSON.stringify(at)}.`,
          ),
        );
      }
      done(null, parsed);
    },
  );
}

/** What both listeners share: request ids, logging, body limit and parsing, validation, the error envelope. */
export function createBaseApp(ctx: ServiceContext, options: { trustProxy?: string[] | false } = {}): AppInstance {
  const requestTimeout = ctx.config.requestTimeoutMs;
  const app = Fastify({
    logger: ctx.logger === false ? false : loggerOptions(ctx.config.logLevel),
    logController: new RequestLogController(ctx.logger === false ? undefined : ctx.config.logLevel),
    genReqId: requestIdOfRaw,
    // The whole request, headers and body, within REQUEST_TIMEOUT_MS of its first byte (Node's
    // requestTimeout; headersTimeout the same): a client that trickles its body is cut, answered
    // 400 by `clientErrorHandler`. Node looks for such requests every connectionsCheckingInterval.
    requestTimeout,
    http: {
      connectionsCheckingInterval: requestTimeoutCheckMs(requestTimeout),
      headersTimeout: requestTimeout,
      requestTimeout,
    },
    // Without a logger Fastify hands every request the null logger itself: nothing to make lazy.
    ...(ctx.logger === false ? {} : { childLoggerFactory: requestLogger }),
    trustProxy: options.trustProxy ?? false,
    bodyLimit: ctx.config.bodyLimitBytes,
    // Requests that reach a closing listener (on a connection still open) are answered by the
    // first hook below, with the envelope and the request id, not by Fastify's bare 503 body.
    return503OnClosing: false,
    routerOptions: { maxParamLength: pathParamLengthMax },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as AppInstance;
  app.server.headersTimeout = requestTimeout;
  trackConnections(app);
  // A server span per request when tracing is on; its hooks first, so later ones run in its trace.
  tracing()?.instrumentHttp(app);
  app.setValidatorCompiler(validatorCompiler);
  const strict = ctx.config.strictResponses;
  if (strict === 'fail' || strict === 'report') {
    const report = violationReporter(ctx.config.strictResponsesLog);
    app.setSerializerCompiler(strictSerializerCompiler(strict, report));
    installStrictResponseHook(app, strict, report);
  } else {
    app.setSerializerCompiler(serializerCompiler);
  }
  installBodyParsing(app);
  installErrorHandling(app, ctx.mapDomainError);
  // Set when the listener starts to close (Fastify's own flag is not public): one boolean per request.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // First of every route's hooks: the request id header, a listener closing, then text no later
  // step may see. Callback style: synchronous work needs no promise per request. (The latency is
  // Fastify's `reply.elapsedTime`, from the request's start: no clock read of our own.) Attached
  // per route, not as a listener-wide hook, so that a route that reads nothing of the request
  // (`config.readsNoInput`: /healthz) runs no hook at all: its handler is wrapped with the request
  // id and the closing check instead. Requests that match no route get their id from the 404
  // handler, like every error answer (installErrorHandling).
  const requestChecks = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    void reply.header('x-request-id', req.id);
    if (closing && !req.routeOptions.config.answersWhileClosing) return refuseWhileClosing(req, reply);
    try {
      refuseUnsafeText(req);
    } catch (err) {
      return done(err as Error);
    }
    done();
  };
  firstChecks.add(requestChecks);
  app.addHook('onRoute', (route) => {
    if (route.config?.readsNoInput) {
      const handler = route.handler;
      route.handler = function (this: unknown, req: FastifyRequest, reply: FastifyReply) {
        void reply.header('x-request-id', req.id);
        if (closing && !route.config?.answersWhileClosing) return refuseWhileClosing(req, reply);
        return handler.call(this as never, req, reply);
      } as typeof route.handler;
      return;
    }
    route.onRequest = [requestChecks, ...hooksOf(route.onRequest)] as typeof route.onRequest;
  });
  return app;
}

const rawRequestId = Symbol('requestId');

/** Fastify's `genReqId`: a new id, kept on the raw request too, so a drain cut short can name the requests it ends. */
function requestIdOfRaw(raw: IncomingMessage): string {
  const id = newRequestId();
  (raw as IncomingMessage & { [rawRequestId]?: string })[rawRequestId] = id;
  return id;
}

const openConnections = new WeakMap<object, Set<Socket>>();

/** Keeps the listener's open connections (a set add and delete per connection, nothing per request) for
 * `cutConnections`. */
function trackConnections(app: AppInstance): void {
  const sockets = new Set<Socket>();
  openConnections.set(app, sockets);
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
}

/** A request a closed connection cut short: what the log says of it. */
export interface CutRequest {
  reqId: string | undefined;
  method: string | undefined;
  /** The path with ids, tickets and tokens redacted and no query (`redactedPath`). */
  path: string;
  /** The request had not been received whole (a slow body). */
  receiving: boolean;
}

/**
 * Closes every connection the listener still has (the end of a drain that ran out of time), and
 * answers what they carried: how many there were and the requests in flight on them (idle
 * keep-alive connections carry none).
 */
export function cutConnections(app: AppInstance): { connections: number; requests: CutRequest[] } {
  const sockets = [...(openConnections.get(app) ?? [])];
  const requests: CutRequest[] = [];
  for (const socket of sockets) {
    // Node's response in progress on the connection (`_httpMessage`), and through it its request.
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    const req = res?.req as (IncomingMessage & { [rawRequestId]?: string }) | undefined;
    if (!req || res!.writableFinished) continue;
    requests.push({
      reqId: req[rawRequestId],
      method: req.method,
      path: redactedPath(req.url ?? ''),
      receiving: !req.complete,
    });
  }
  app.server.closeAllConnections();
  for (const socket of sockets) socket.destroy();
  return { connections: sockets.length, requests };
}

/**
 * A request that arrives while the listener closes (on a keep-alive connection that was busy when
 * the close began): not run, `api_error` (500, "retry with same key": the reference's table has no
 * 503) in the envelope with `Connection: close`, so the client's next try opens a connection to a
 * listener still serving.
 */
function refuseWhileClosing(req: FastifyRequest, reply: FastifyReply): void {
  const apiError = new ApiError(
    'api_error',
    'The service is shutting down; the request was not run. Retry it, with the same idempotency key.',
  );
  void reply.code(apiError.status).header('connection', 'close').send(apiError.body(req.id));
}

export type RouteModule = (app: AppInstance, ctx: ServiceContext) => Promise<void>;

/** Queues route modules, each in its own encapsulated plugin scope; Fastify loads them in order at ready. */
export function registerModules(app: AppInstance, ctx: ServiceContext, modules: readonly RouteModule[]): void {
  for (const module of modules) void app.register(async (scope) => module(scope as AppInstance, ctx));
}

/** The public listener: the base app and the request pipeline (pipeline.ts) in front of every route. */
export function buildPublicApp(ctx: ServiceContext): AppInstance {
  const app = createBaseApp(ctx, {
    trustProxy: ctx.config.trustedProxies.length > 0 ? ctx.config.trustedProxies : false,
  });
  installPublicPipeline(app, ctx);
  app.decorateRequest('publicBaseUrl', {
    getter(this: FastifyRequest) {
      const base = ctx.config.publicBaseUrls[this.environment];
      // Filled in at start-up before the listener opens (server.ts): missing is a wiring fault.
      if (base === undefined) throw new Error(`no public base URL for the ${this.environment} environment`);
      return base;
    },
  } as unknown as string);
  return app;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers itself while its listener closes (/readyz: 503), instead of the shutdown refusal. */
    answersWhileClosing?: boolean;
  }
  interface FastifyRequest {
    /** The public base URL of the request's environment (PUBLIC_BASE_URL_*): hosted screens' links are built from it,
     * never from the Host header. */
    publicBaseUrl: string;
  }
}
