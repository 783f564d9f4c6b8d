// Over 300 lines: the public request pipeline, its steps in their order (architecture.md, "The request pipeline").
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../../service-context.js';
import type { Environment } from '../../db/schema.js';
import type { AppInstance } from './app-instance.js';
import { hooksOf, withOnRequestFirst } from '../routes/route-hooks.js';
import {
  authenticate,
  authenticateHeld,
  bearerFrom,
  checkIp,
  checkMerchantStatus,
  type Authenticated,
} from '../auth/auth.js';
import { environmentFromHost } from '../environment.js';
import { ApiError } from '../errors.js';
import { beginIdempotency, matchStored, sendReplay, storeAfterResponse } from '../writes/idempotency.js';
import { isKeyShape, requestHash } from '../writes/request-hash.js';
import { openCursor, sealCursor } from '../routes/cursor-seal.js';
import { configuredKey } from '../auth/keys.js';
import type { NonceUse } from '../writes/nonces.js';
import {
  isSignedRoute,
  rateLimitsPerMinute,
  routeKeys,
  type RateBucket,
  type RouteAccess,
  type RouteKeys,
} from '../routes/route-access.js';
import { hasScope } from '../auth/scopes.js';
import { verifySignature } from '../auth/signing.js';
import type { ResolvedMember } from './request-context.js';
import './request-context.js';

/**
 * The public request pipeline (docs/architecture.md, "The request pipeline"): every route's
 * access declaration, then per request the environment, authentication, rate window, IP
 * allowlist, scope, merchant status, principal, signature and nonce, idempotency; after the
 * answer the stored result, metrics and the API call log.
 */

const undeclared: RouteAccess = { scope: 'public' };

export function installPublicPipeline(app: AppInstance, ctx: ServiceContext): void {
  const { db, config } = ctx;

  // The request's environment, from its Host header, when something asks (public routes that
  // never ask pay nothing); the authentication hook sets it for the others.
  app.decorateRequest('environment', {
    getter(this: FastifyRequest & { _environment?: Environment }) {
      return (this._environment ??= environmentFromHost(this.headers.host));
    },
    setter(this: FastifyRequest & { _environment?: Environment }, value: Environment) {
      this._environment = value;
    },
  } as unknown as Environment);

  // Every route declares its access; one that does not is wired to refuse with 403. The pipeline's
  // steps are attached per route, to the routes that need them (ahead of the route's own hooks):
  // a public route such as /healthz runs none of them, only the shared request id, log and metrics.
  app.addHook('onRoute', (route) => {
    if (!route.config?.access) {
      app.log.warn({ url: route.url }, 'route without access declaration answers 403');
      route.config = { ...(route.config ?? {}), access: undeclared };
      // It is not part of the API: the document leaves it out.
      route.schema = { ...(route.schema ?? {}), hide: true } as typeof route.schema;
      route.handler = async () => {
        throw new ApiError('insufficient_scope', 'This endpoint has no scope declaration.');
      };
      route.preValidation = undefined;
      return;
    }
    const access = route.config.access;
    if (isList(route.schema)) {
      route.preValidation = [openListCursor, ...hooksOf(route.preValidation)] as typeof route.preValidation;
      route.preSerialization = [sealNextCursor, ...hooksOf(route.preSerialization)] as typeof route.preSerialization;
    }
    if (access.scope === 'public' && !access.sandboxOnly) return;
    route.onRequest = withOnRequestFirst(route.onRequest, authenticateRequest) as typeof route.onRequest;
    if (access.scope === 'public') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const keyed = (access.idempotency ?? 'none') !== 'none';
    // The rate bucket and the idempotency endpoint, from the route (never the raw URL), once here.
    const keys: Record<string, RouteKeys> = {};
    for (const m of methods) keys[m] = routeKeys(m, route.url, keyed);
    route.config = { ...route.config, keys };
    // Reads that are neither signed nor keyed (GET /v1/balances) skip the step, and its promise.
    const signedOrKeyed = methods.some((m) => isSignedRoute(m, access)) || keyed;
    if (signedOrKeyed)
      route.preValidation = [signatureAndIdempotency, ...hooksOf(route.preValidation)] as typeof route.preValidation;
    if (access.commit === 'grouped') {
      // A grouped write leaves its nonce to its batch; one whose input is refused never reaches
      // a batch, so the refusal comes after its nonce and its key's result, as for other writes.
      route.attachValidation = true;
      route.preHandler = [refuseInvalidInput, ...hooksOf(route.preHandler)] as typeof route.preHandler;
    }
    if ((access.idempotency ?? 'none') !== 'none')
      route.onSend = [storeIdempotentResult, ...hooksOf(route.onSend)] as typeof route.onSend;
  });

  /**
   * Callback style, and synchronous while everything it needs is held in memory (the token's
   * state, the rate window far from its quota, the member): a cached read then makes no promise
   * here. Whatever is not held is read as before, and the steps keep their order.
   */
  function authenticateRequest(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    let pending: Promise<void> | undefined;
    try {
      pending = authenticateSteps(req);
    } catch (err) {
      return done(err as Error);
    }
    if (pending === undefined) return done();
    pending.then(() => done(), done);
  }

  /** The steps; a promise only when one of them has to wait for the database. */
  function authenticateSteps(req: FastifyRequest): Promise<void> | undefined {
    req.environment = environmentFromHost(req.headers.host);
    const routeConfig = req.routeOptions.config;
    const access = routeConfig.access;
    if (!access) return undefined;
    if (access.sandboxOnly && req.environment !== 'sandbox') throw new ApiError('not_found');
    if (access.scope === 'public') return undefined;
    const bucket = routeConfig.keys![req.method]!.rateBucket;
    const nowMs = ctx.requestClock();
    const token = bearerFrom(req.headers);
    const held = authenticateHeld(ctx.authCache, token, req.environment, nowMs);
    if (held) return afterAuthentication(req, access, bucket, held, nowMs);
    return authenticate(db, ctx.authCache, token, req.environment, nowMs).then((auth) =>
      afterAuthentication(req, access, bucket, auth, nowMs),
    );
  }

  function afterAuthentication(
    req: FastifyRequest,
    access: RouteAccess,
    bucket: RateBucket,
    auth: Authenticated,
    nowMs: number,
  ): Promise<void> | undefined {
    // Known from here on: refusals below are logged against the merchant too.
    req.auth = auth;
    const subject = `${auth.merchantId}:${auth.environment}`;
    const limit = rateLimitsPerMinute[bucket] * config.rateLimitScale;
    if (!ctx.rateWindows.hitHeld(subject, bucket, limit, nowMs)) {
      return ctx.rateWindows.hit(subject, bucket, limit, nowMs).then(() => checksAndPrincipal(req, access, auth));
    }
    return checksAndPrincipal(req, access, auth);
  }

  function checksAndPrincipal(
    req: FastifyRequest,
    access: RouteAccess,
    auth: Authenticated,
  ): Promise<void> | undefined {
    checkIp(auth.environment, auth.ipAllowlist, req.ip);
    // (A public route never gets here: authenticateSteps returned before.)
    if (access.scope !== 'token' && access.scope !== 'public' && !hasScope(auth.scopes, access.scope))
      throw new ApiError('insufficient_scope');
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    checkMerchantStatus(auth.merchantStatus, isRead);
    return bindPrincipal(ctx, req, access);
  }

  async function signatureAndIdempotency(req: FastifyRequest, reply: FastifyReply) {
    const routeConfig = req.routeOptions.config;
    const access = routeConfig.access;
    if (!access || !req.auth) return;
    const nonce = verifiedNonce(ctx, req, access);
    let keyRefusal: unknown;
    try {
      prepareIdempotency(ctx, req, access, routeConfig.keys![req.method]!);
    } catch (err) {
      keyRefusal = err;
    }
    if (nonce && req.idempotency && access.commit === 'grouped') {
      // Consumed by the write's batch, in its transaction, with the key's lock and record
      // (write-batch.ts): no statement of its own, no commit of its own.
      req.idempotency.nonce = nonce;
      return;
    }
    if (nonce && req.idempotency) return nonceAndReplay(req, reply, nonce);
    if (nonce && !(await ctx.nonces.check({ use: nonce })).fresh) throw new ApiError('nonce_reused');
    if (keyRefusal) throw keyRefusal;
    if (!req.idempotency) return;
    const replay = await beginIdempotency(ctx.db, req);
    if (replay) return sendReplay(reply, replay.stored);
  }

  /**
   * One statement for both, shared with the signed requests that arrived with this one
   * (nonce-batch.ts): the nonce consumed, the key's result looked up and replayed.
   */
  async function nonceAndReplay(req: FastifyRequest, reply: FastifyReply, nonce: NonceUse) {
    const { fresh, record } = await ctx.nonces.check({
      use: nonce,
      key: { merchantId: req.auth!.merchantId, environment: req.auth!.environment, key: req.idempotency!.key },
    });
    if (!fresh) {
      req.idempotency = undefined;
      throw new ApiError('nonce_reused');
    }
    const replay = record ? matchStored(req, record) : undefined;
    if (replay) return sendReplay(reply, replay.stored);
    return undefined;
  }

  /** A grouped route's input refused by its schema: its nonce and its key's result first (the batch would have done
   * both). */
  async function refuseInvalidInput(req: FastifyRequest, reply: FastifyReply) {
    const refusal = req.validationError;
    if (!refusal) return;
    const nonce = req.idempotency?.nonce;
    if (nonce) {
      req.idempotency!.nonce = undefined;
      await nonceAndReplay(req, reply, nonce);
      if (reply.sent) return;
    }
    throw refusal;
  }

  // List cursors are sealed on the way out and opened on the way in (cursor-seal.ts); the key is
  // derived at first use, after start-up has resolved the master key.
  let cursorKey: Buffer | undefined;
  const cursorKeyOf = () => (cursorKey ??= configuredKey(config, 'pagination/cursor/v1'));

  function openListCursor(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
    const query = req.query as { cursor?: unknown } | undefined;
    if (query && typeof query.cursor === 'string' && query.cursor !== '') {
      const opened = openCursor(cursorKeyOf(), query.cursor);
      // Unreadable: the walk restarts from the first page, as the services do for a bad cursor.
      if (opened === undefined) delete query.cursor;
      else query.cursor = opened;
    }
    done();
  }

  function sealNextCursor(
    _req: FastifyRequest,
    _reply: FastifyReply,
    payload: unknown,
    done: (err: Error | null, payload?: unknown) => void,
  ) {
    const page = payload as { next_cursor?: unknown } | null;
    if (page && typeof page === 'object' && typeof page.next_cursor === 'string') {
      return done(null, { ...page, next_cursor: sealCursor(cursorKeyOf(), page.next_cursor) });
    }
    done(null, payload);
  }

  async function storeIdempotentResult(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
    if (req.idempotency && typeof payload === 'string') {
      await storeAfterResponse(db, req, reply.statusCode, payload);
    }
    return payload;
  }

  // Every answer, matched or not: the latency histogram, and the API call log of authenticated
  // requests (a buffered push). Callback style: no promise per request.
  app.addHook('onResponse', (req, reply, done) => {
    // Fastify times every request (its request log needs it): from before the first hook to the answer's end.
    const seconds = reply.elapsedTime / 1000;
    ctx.metrics.httpDuration.observe(
      'public',
      req.method,
      req.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      seconds,
    );
    if (req.auth) {
      ctx.apiCallLog.record({
        merchant_id: req.auth.merchantId,
        environment: req.auth.environment,
        request_id: req.id,
        method: req.method,
        path: req.url.slice(0, 512),
        status_code: reply.statusCode,
        duration_ms: Math.round(seconds * 1000),
      });
    }
    done();
  });
}

/** A list route: its 200 answer is a list envelope (`next_cursor`) and its query takes a `cursor`. */
function isList(schema: unknown): boolean {
  const s = schema as
    | {
        response?: Record<string, { properties?: Record<string, unknown> }>;
        querystring?: { properties?: Record<string, unknown> };
      }
    | undefined;
  return (
    s?.response?.['200']?.properties?.next_cursor !== undefined && s?.querystring?.properties?.cursor !== undefined
  );
}

/** Binds the member `x-on-behalf-of` names; a promise only when the member has to be read. */
function bindPrincipal(ctx: ServiceContext, req: FastifyRequest, access: RouteAccess): Promise<void> | undefined {
  const principal = access.principal ?? 'merchant';
  const raw = req.headers['x-on-behalf-of'];
  const onBehalfOf = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
  if (principal === 'merchant') {
    if (raw !== undefined)
      throw new ApiError(
        'invalid_request',
        'x-on-behalf-of is not accepted on this endpoint; it acts as the merchant.',
      );
    return undefined;
  }
  if (onBehalfOf === '') {
    // Sent but blank is no member (the reference: the trimmed value must be non-empty, no default
    // member), also where the header is optional: acting as the merchant would answer for every member.
    if (principal === 'member' || raw !== undefined) throw new ApiError('member_context_required');
    return undefined;
  }
  // The members area answers who the header names (injected by the composition root: the
  // platform imports no module); held members without a promise.
  const { merchantId, environment } = req.auth!;
  const held = ctx.resolveMember.held?.(merchantId, environment, onBehalfOf);
  if (held) return bindMember(req, held);
  return ctx.resolveMember(ctx.db, merchantId, environment, onBehalfOf).then((member) => bindMember(req, member));
}

function bindMember(req: FastifyRequest, member: ResolvedMember | undefined): undefined {
  if (!member || member.status !== 'active') throw new ApiError('member_not_found');
  req.member = { id: member.id, externalMemberId: member.external_member_id, kycLevel: member.kyc_level };
  return undefined;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Verifies a signed route's signature (no round trip); answers the nonce to consume. */
function verifiedNonce(ctx: ServiceContext, req: FastifyRequest, access: RouteAccess): NonceUse | undefined {
  if (!isSignedRoute(req.method, access)) return undefined;
  const auth = req.auth!;
  const nowMs = ctx.requestClock();
  const check = verifySignature(
    auth.signingKey,
    {
      method: req.method,
      pathWithQuery: req.raw.url ?? req.url,
      rawBody: req.rawBody ?? Buffer.alloc(0),
      timestamp: header(req, 'x-timestamp'),
      nonce: header(req, 'x-nonce'),
      signature: header(req, 'x-signature'),
    },
    Math.floor(nowMs / 1000),
  );
  if (!check.ok) throw new ApiError(check.code);
  return {
    merchantId: auth.merchantId,
    environment: auth.environment,
    nonce: check.nonce,
    timestampSeconds: check.timestampSeconds,
    nowMs,
  };
}

/** Sets `req.idempotency` for a route that takes a key and got a well-formed one; throws for a missing or malformed
 * key. */
function prepareIdempotency(ctx: ServiceContext, req: FastifyRequest, access: RouteAccess, keys: RouteKeys): void {
  const mode = access.idempotency ?? 'none';
  if (mode === 'none') return;
  const key = header(req, 'x-idempotency-key');
  if (key === undefined || key.trim() === '') {
    if (mode === 'required') throw new ApiError('idempotency_key_required');
    return;
  }
  if (!isKeyShape(key)) throw new ApiError('idempotency_key_invalid');
  if (access.keyedBody && !access.keyedBody.applies(req.body)) return;
  req.idempotency = {
    key: key.toLowerCase(),
    // Keys are the merchant's; on behalf of a member the member is part of the request, so the
    // same key and body for another member is another request (409), never that member's replay.
    endpoint: req.member ? `${keys.endpoint!(req.params)} for ${req.member.id}` : keys.endpoint!(req.params),
    requestHash: requestHash(
      req.rawBody,
      access.canonicalBody ? access.canonicalBody(req.body) : req.body,
      access.secretBodyFields?.length
        ? { fields: access.secretBodyFields, key: configuredKey(ctx.config, 'idempotency/secret-fields/v1') }
        : undefined,
    ),
    settled: false,
    noStore: false,
    now: ctx.requestClock,
  };
}
