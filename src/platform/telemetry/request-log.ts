// The request log: what a request's lines say and hide (redacted headers, credential paths,
// unmatched paths), one line per request at info, and the lazy per-request logger.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino from 'pino';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import { tracing } from './telemetry.js';

const redactedHeaders = ['authorization', 'x-auth-token', 'x-api-key', 'x-signature', 'x-step-up', 'cookie'];

/**
 * The URL as logged. A route whose path carries a credential is logged as the route's pattern,
 * never as sent (in any spelling the router accepts): the console's invite link
 * (`/console/invite/:token`, stored only as a hash) and a hosted screen's link
 * (`/hosted/:ticket_id` and the sandbox helper that completes it): whoever holds a ticket's link
 * can open its screen, and a card reveal screen shows the card's number and CVV. A path that
 * matched no route (a typo may still carry a ticket) is logged redacted (`redactedPath`).
 */
const credentialParams = ['/:token', '/:ticket_id'];

export function loggedUrl(req: FastifyRequest): string {
  const route = req.routeOptions?.url;
  if (route === undefined) return redactedPath(req.url);
  return credentialParams.some((p) => route.includes(p)) ? route : req.url;
}

/** A path segment kept as sent: a word of the API's paths (`v1`, `hosted-screens`, `openapi.json`), never an id, ticket
 * or token. */
const plainSegment = /^[A-Za-z][A-Za-z0-9.-]{0,23}$/;
const digits = /[0-9]/g;

/**
 * A path that matched no route, as logged: the query dropped, and every segment that is not a
 * plain word replaced by `:redacted`: anything with `_` (every id and ticket of ours has a
 * prefix: `kyc_...`, `mem_...`), a percent-escape or more than two digits, or longer than 24
 * characters (tokens are 43). `/v1//sandbox/hosted-screens/kyc_<hex>/complete` is logged as
 * `/v1//sandbox/hosted-screens/:redacted/complete`.
 */
export function redactedPath(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return path
    .split('/')
    .map((segment) =>
      segment === '' || (plainSegment.test(segment) && (segment.match(digits)?.length ?? 0) <= 2)
        ? segment
        : ':redacted',
    )
    .join('/');
}

/** The route as logged and counted: the matched route's pattern, or the redacted path of a request that matched none.
 * */
export function loggedRoute(req: FastifyRequest): string {
  return req.routeOptions?.url ?? redactedPath(req.url);
}

const verboseLevels = new Set(['debug', 'trace']);

let stdoutDestination: ReturnType<typeof pino.destination> | undefined;

/**
 * Where log lines go: stdout, written asynchronously (pino's SonicBoom, `sync: false`), one for
 * the process. Pino's default writes every line with a blocking `write(2)` on the request's path:
 * at `info` (a line per request) that was a tenth of a read's CPU (docs/performance.md). Lines
 * written while a write is in flight are joined into the next one; whatever is buffered at exit is
 * flushed then (a SIGKILL loses at most what a write had not yet taken).
 */
function logDestination(): ReturnType<typeof pino.destination> {
  if (!stdoutDestination) {
    const destination = pino.destination({ dest: 1, sync: false });
    process.on('exit', () => {
      try {
        destination.flushSync();
      } catch {
        // Not yet open, or already closed: nothing to flush.
      }
    });
    stdoutDestination = destination;
  }
  return stdoutDestination;
}

export function loggerOptions(level: string) {
  // Headers (redacted below) only at debug and trace: at info a request is one line of its own fields.
  const withHeaders = verboseLevels.has(level);
  // With tracing on, every line logged within a trace carries its trace and span id (telemetry.ts).
  const mixin = tracing()?.logMixin;
  return {
    level,
    stream: logDestination(),
    ...(mixin ? { mixin } : {}),
    redact: {
      paths: [
        ...redactedHeaders.map((h) => `req.headers["${h}"]`),
        '*.api_key',
        '*.signing_key',
        '*.auth_token',
        '*.pin',
        '*.cvv',
        '*.pan',
        '*.card_number',
        '*.secret',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(req: FastifyRequest) {
        return withHeaders
          ? {
              method: req.method,
              url: loggedUrl(req),
              host: req.headers.host,
              remoteAddress: req.ip,
              headers: { ...req.headers },
            }
          : { method: req.method, url: loggedUrl(req), remoteAddress: req.ip };
      },
    },
  };
}

/**
 * Fastify's request log lines, made ours: one line per request at `info` when its answer has
 * been sent (`request completed`: method, route pattern, status, duration, and the merchant, key
 * and environment of an authenticated request), and the request with its headers (redacted) when
 * it arrives only at `debug`. Fastify's own pair (every header at `info`, twice the lines) is not written.
 */
export class RequestLogController extends LogController {
  /** `level`: the listener's log level, undefined without a logger (tests, the bench): then nothing is even assembled.
   * */
  constructor(level: string | undefined) {
    super();
    this.debug = level === 'debug' || level === 'trace';
    this.info = this.debug || level === 'info';
    this.errors = this.info || level === 'warn' || level === 'error';
  }

  private readonly debug: boolean;
  private readonly info: boolean;
  private readonly errors: boolean;

  override incomingRequest(request: FastifyRequest): void {
    if (this.debug) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error ? !this.errors : !this.info) return;
    // A load balancer's probe of /healthz (a route that reads nothing of the request) is logged
    // at debug only: at info it would be most of the log, saying nothing.
    if (!error && !this.debug && request.routeOptions.config?.readsNoInput) return;
    const auth = request.auth;
    const line = {
      method: request.method,
      route: loggedRoute(request),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      ...(auth ? { merchantId: auth.merchantId, keyId: auth.keyId, environment: auth.environment } : {}),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/**
 * A request's logger (`req.log`), whose pino child is made at the first line it logs: making a
 * child (its bindings through the redaction) cost every request a few per cent of its CPU, and
 * most requests log nothing below the configured level. What it writes is the child's own line.
 */
class RequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger & { isLevelEnabled(level: string): boolean },
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private write(level: LevelMethod, args: unknown[]): void {
    if (this.made === undefined) {
      if (!this.parent.isLevelEnabled(level)) return;
      // A request's usual one line (`request completed`: an object and a message) is written by
      // the parent with the child's bindings first in the object: the same line, without making
      // a child for it (the child's bindings serialised and redacted, a few per cent of a write).
      const [fields, message] = args;
      if (this.plainChild && args.length === 2 && isPlainObject(fields) && typeof message === 'string') {
        (this.parent[level] as (...a: unknown[]) => void)({ ...this.bindings, ...fields }, message);
        return;
      }
    }
    (this.logger[level] as (...a: unknown[]) => void)(...args);
  }

  /** The child would be the parent with its bindings: no serializers or options of its own. */
  private get plainChild(): boolean {
    return Object.keys(this.options).length === 0;
  }

  fatal(...args: unknown[]) {
    this.write('fatal', args);
  }
  error(...args: unknown[]) {
    this.write('error', args);
  }
  warn(...args: unknown[]) {
    this.write('warn', args);
  }
  info(...args: unknown[]) {
    this.write('info', args);
  }
  debug(...args: unknown[]) {
    this.write('debug', args);
  }
  trace(...args: unknown[]) {
    this.write('trace', args);
  }
  silent() {}

  isLevelEnabled(level: string): boolean {
    return this.made
      ? (this.made as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level)
      : this.parent.isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child, unless the route sets a level of its own. */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (options.level !== undefined || typeof (logger as { isLevelEnabled?: unknown }).isLevelEnabled !== 'function')
    return logger.child(bindings, options);
  return new RequestLogger(
    logger as FastifyBaseLogger & { isLevelEnabled(level: string): boolean },
    bindings,
    options,
  ) as unknown as FastifyBaseLogger;
}
