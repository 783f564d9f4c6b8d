import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { Type } from 'typebox';
import type { ServiceContext } from '../../service-context.js';
import type { AppInstance } from '../http/http-app.js';
import type { Effect, RouteSchema } from './route-types.js';

/** The status a route answers on success: the 2xx its response schema declares (200 if none). */
export function successStatus(schema: RouteSchema): number {
  const codes = Object.keys(schema.response)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b);
  return codes[0] ?? 200;
}

/** What every typed route shares: the success status, the domain-error mapping and the send. */
export interface Core {
  status: number;
  /** Wraps an effect so a domain error (the ledger's) becomes the reference's code inside the transaction. */
  mapped: <T>(effect: Effect<T>) => Effect<T>;
}

/**
 * Mounts one typed route, public or operator (operator-route.ts shares it): `input` builds what the handler receives;
 * what
 * the handler returns is sent with the success status through the response schema.
 */
export function mount<I>(
  app: AppInstance,
  ctx: ServiceContext,
  method: HTTPMethods,
  url: string,
  def: { schema: RouteSchema; config?: object; preValidation?: (req: FastifyRequest) => Promise<void> },
  input: (req: FastifyRequest, reply: FastifyReply, core: Core) => I,
  handler: (input: I) => Promise<unknown>,
): void {
  const core: Core = {
    status: successStatus(def.schema),
    mapped:
      <T>(effect: Effect<T>): Effect<T> =>
      async (trx) => {
        try {
          return await effect(trx);
        } catch (err) {
          // Domain errors (the ledger's) become the reference's code here, inside the transaction,
          // so a refusal is stored with the key exactly like a thrown ApiError.
          throw ctx.mapDomainError(err) ?? err;
        }
      },
  };
  // A body declared `Type.Optional(...)` may be left out: no body at all is read as `{}` (its
  // defaults), where the schema alone would answer 400 "must be object". Only on such routes.
  const preValidation = [
    ...(def.schema.body && Type.IsOptional(def.schema.body) ? [absentBodyAsEmpty] : []),
    ...(def.preValidation ? [def.preValidation] : []),
  ];
  app.route({
    method,
    url,
    ...(def.config ? { config: def.config } : {}),
    schema: def.schema,
    ...(preValidation.length ? { preValidation } : {}),
    handler: async (req: FastifyRequest, reply: FastifyReply): Promise<any> => {
      const result = await handler(input(req, reply, core));
      if (reply.sent || result === (reply as unknown)) return reply;
      return reply.code(core.status).send(result);
    },
  });
}

/** A route's hook (callback style, no promise): an absent body becomes `{}` before validation. */
function absentBodyAsEmpty(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (req.body === undefined) req.body = {};
  done();
}

/** A router's shorthands, one per method: `on(method)` makes the one for `method`. */
export type ByMethod<T> = Record<'get' | 'post' | 'patch' | 'put' | 'delete', T>;

export function byMethod<T>(on: (method: HTTPMethods) => T): ByMethod<T> {
  return { get: on('GET'), post: on('POST'), patch: on('PATCH'), put: on('PUT'), delete: on('DELETE') };
}
