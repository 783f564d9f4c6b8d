import type { FastifyRequest, HTTPMethods } from 'fastify';
import { Type } from 'typebox';
import type { ServiceContext } from '../../service-context.js';
import { ApiError, type ErrorCode } from '../errors.js';
import type { AppInstance } from '../http/http-app.js';
import { byMethod, mount, type ByMethod } from './route-mount.js';
import type { Effect, Part, ResultOf, RouteSchema } from './route-types.js';
import { requestTransaction } from '../writes/idempotency.js';

/**
 * The operator form of the typed route helper (see "Writing a route" in docs/architecture.md):
 *
 *   const route = operatorRouter(app, ctx);
 *   route.post('/admin/v1/merchants', {
 *     schema: { body: CreateMerchantBody, response: { 201: OperatorMerchant } },
 *   }, ({ body, write }) => write((trx) => createMerchant(trx, body.name, ctx.clock.real())));
 *
 * The same core as `router` (route.ts): validated typed input, the result sent with the success
 * status through the response schema, domain errors mapped. What differs: the principal is the
 * operator (the operator app checks its bearer token on every /admin call before any handler),
 * there is no access declaration, and `write` runs its effect in one plain transaction (no
 * idempotency key; run again after a deadlock, `requestTransaction`) and gives back what it committed.
 */

/** The caller of every operator route: the operator, whose token the operator app checked. */
export interface OperatorPrincipal {
  readonly operator: true;
}

const operator: OperatorPrincipal = Object.freeze({ operator: true });

/** What an operator route declares besides its schema; kept on the route's config. */
export interface OperatorAccess {
  /** Codes the handler can answer beyond `invalid_token` and `invalid_request`. */
  errors: readonly ErrorCode[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    operator?: OperatorAccess;
  }
}

export interface OperatorRouteInput<S extends RouteSchema> {
  principal: OperatorPrincipal;
  params: Part<S, 'params'>;
  query: Part<S, 'querystring'>;
  body: Part<S, 'body'>;
  headers: Part<S, 'headers'>;
  /** Runs `effect` in one transaction (domain errors mapped) and gives back what it returned. */
  write: <T>(effect: Effect<T>) => Promise<T>;
  req: FastifyRequest;
}

export interface OperatorRouteDefinition<S extends RouteSchema> {
  /** Codes the handler can answer beyond the operator app's own (`invalid_token`, `invalid_request`). */
  errors?: readonly ErrorCode[];
  schema: S;
}

export type OperatorRouteHandler<S extends RouteSchema> = (input: OperatorRouteInput<S>) => Promise<ResultOf<S>>;

type Shorthand = <const S extends RouteSchema>(
  url: string,
  def: OperatorRouteDefinition<S>,
  handler: OperatorRouteHandler<S>,
) => void;

export type OperatorRouter = ByMethod<Shorthand>;

/** Registers one operator route; `operatorRouter(app, ctx)` gives the per-method shorthands. */
export function defineOperatorRoute<const S extends RouteSchema>(
  app: AppInstance,
  ctx: ServiceContext,
  method: HTTPMethods,
  url: string,
  def: OperatorRouteDefinition<S>,
  handler: OperatorRouteHandler<S>,
): void {
  const config = { operator: { errors: [...(def.errors ?? [])] } };
  const known = declaredFields(def.schema.body);
  const preValidation = known ? async (req: FastifyRequest) => refuseUnknownFields(req.body, known) : undefined;
  mount(
    app,
    ctx,
    method,
    url,
    { schema: def.schema, config, ...(preValidation ? { preValidation } : {}) },
    (req, _reply, { mapped }) =>
      ({
        principal: operator,
        params: req.params,
        query: req.query,
        body: req.body,
        headers: req.headers,
        write: <T>(effect: Effect<T>) => requestTransaction(ctx.db, req, mapped(effect)),
        req,
      }) as unknown as OperatorRouteInput<S>,
    handler,
  );
}

/** The top-level fields an object body schema names, unless it takes others too; undefined for any other body. */
function declaredFields(body: unknown): Set<string> | undefined {
  const schema = body as
    | {
        type?: unknown;
        properties?: Record<string, unknown>;
        additionalProperties?: unknown;
        patternProperties?: unknown;
      }
    | undefined;
  if (!schema || schema.type !== 'object' || !schema.properties) return undefined;
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return undefined;
  if (schema.patternProperties !== undefined) return undefined;
  return new Set(Object.keys(schema.properties));
}

/**
 * An operator's body naming a field the call does not take is refused (400 `invalid_request`
 * naming it), where validation alone would drop it and answer 200: `{"status": "disabled"}` sent
 * to a call that takes `disabled` would change nothing while looking done.
 */
function refuseUnknownFields(body: unknown, known: Set<string>): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const unknown = Object.keys(body).filter((k) => !known.has(k));
  if (unknown.length === 0) return;
  const takes = known.size > 0 ? ` This call takes: ${[...known].join(', ')}.` : ' This call takes no fields.';
  const named =
    unknown
      .slice(0, 5)
      .map((k) => k.slice(0, 40))
      .join(', ') + (unknown.length > 5 ? ` (${unknown.length} in all)` : '');
  throw new ApiError('invalid_request', `Unknown field${unknown.length > 1 ? 's' : ''}: ${named}.${takes}`);
}

/** `operatorRouter(app, ctx).post(url, { errors, schema }, handler)`: see the top of this file. */
export function operatorRouter(app: AppInstance, ctx: ServiceContext): OperatorRouter {
  return byMethod(
    (method): Shorthand =>
      (url, def, handler) =>
        defineOperatorRoute(app, ctx, method, url, def, handler),
  );
}

/** Schemas every operator area shares: an object id in the path, the environment, a time or null. */
export const OperatorIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const OperatorEnvironment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);
export const Time = Type.String({ format: 'date-time' });
export const TimeOrNull = Type.Union([Time, Type.Null()]);
