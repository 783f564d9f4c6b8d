import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { ServiceContext } from '../../service-context.js';
import type { AppInstance } from '../http/http-app.js';
import type { BatchEffect } from '../writes/write-batch.js';
import type { RouteAccess } from './route-access.js';
import { byMethod, mount, type ByMethod, type Core } from './route-mount.js';
import { PublicRouteInput } from './route-input.js';
import type { AnyCommand, Command, PublicRouteSchema, RouteDefinition, RouteHandler } from './route-types.js';

/**
 * One typed way to write a public route (see "Writing a route" in docs/architecture.md):
 *
 *   const route = router(app, ctx);
 *   route.post('/v1/members', {
 *     access: { scope: 'members:write', idempotency: 'required' },
 *     errors: memberErrors.create,
 *     schema: { operationId: 'createMember', summary: 'Create a member', tags, body: CreateMemberBody, response: { 201:
 * Member } },
 *   }, ({ principal, body, write }) => write((trx) => createMember(trx, principal.merchantId, ...)));
 *
 * The handler receives the principal its access declares (never optional for `member`), the
 * validated input typed from the schemas, and `write` / `claim` for transactional effects. What
 * it returns (or what `write` commits) is sent with the route's success status through the
 * route's response schema, so a replay is byte-identical to the first answer. `errors` is the
 * one declaration of the codes the handler can answer: the OpenAPI document reads it.
 *
 * Operator routes use the same core through `operatorRouter` (operator-route.ts): the operator
 * principal, no access or idempotency, and a `write` that is one plain transaction.
 *
 * Its parts: the types a route declares and receives (route-types.ts), what a public handler
 * receives (route-input.ts) and the mount every typed route shares (route-mount.ts).
 */

const isCommand = (h: unknown): h is AnyCommand => typeof h === 'object' && h !== null;

/** Registers one public route; `router(app, ctx)` gives the per-method shorthands. */
export function defineRoute<const A extends RouteAccess, const S extends PublicRouteSchema, P, C>(
  app: AppInstance,
  ctx: ServiceContext,
  method: HTTPMethods,
  url: string,
  def: RouteDefinition<A, S>,
  handler: RouteHandler<A, S> | Command<A, S, P, C>,
): void {
  const command = isCommand(handler) ? (handler as AnyCommand) : undefined;
  // A command made from the request alone leaves its nonce and its key's record to its batch.
  const access: RouteAccess = {
    ...def.access,
    ...(def.errors ? { errors: [...def.errors] } : {}),
    ...(command?.plan ? { commit: 'grouped' as const } : {}),
  };
  // One batch effect per function of the route: the group committer gathers the writes by it.
  const batchEffects = new WeakMap<NonNullable<AnyCommand['commitMany']>, BatchEffect>();
  const input = (req: FastifyRequest, reply: FastifyReply, core: Core) =>
    new PublicRouteInput(req, reply, ctx, access, core, batchEffects);
  mount(
    app,
    ctx,
    method,
    url,
    { schema: def.schema, config: { access }, preValidation: def.preValidation },
    input,
    command ? (i) => i.run(command) : (handler as unknown as (i: PublicRouteInput) => Promise<unknown>),
  );
}

type Shorthand = <const A extends RouteAccess, const S extends PublicRouteSchema, P = never, C = never>(
  url: string,
  def: RouteDefinition<A, S>,
  handler: RouteHandler<A, S> | Command<A, S, P, C>,
) => void;

export type Router = ByMethod<Shorthand>;

/** `router(app, ctx).post(url, { access, errors, schema }, handler)`: see the top of this file. */
export function router(app: AppInstance, ctx: ServiceContext): Router {
  return byMethod(
    (method): Shorthand =>
      (url, def, handler) =>
        defineRoute(app, ctx, method, url, def, handler),
  );
}
