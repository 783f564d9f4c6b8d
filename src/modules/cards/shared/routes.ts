import type { Static, TSchema } from 'typebox';
import type { ServiceContext } from '../../../service-context.js';
import type { ErrorCode } from '../../../platform/errors.js';
import type { RouteModule } from '../../../platform/http/http-app.js';
import type { StoredResult } from '../../../platform/queries/idempotency.js';
import type { Router } from '../../../platform/routes/route.js';
import {
  memberWrite as anyMemberWrite,
  merchantWrite,
  readList,
  readOne,
  sandboxStep,
} from '../../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../../platform/routes/route-module.js';
import type { ClaimOutcome, Effect, Sent } from '../../../platform/routes/route-types.js';
import { hostedOrigin } from '../../hosted-screens/index.js';
import type { MemberCardCaller, Trx } from './queries.js';
import { IdParams, Ticket } from './schemas.js';

/**
 * The kinds of card route, declared once for the area (after platform/routes/route-kinds.ts): every
 * sub-area's routes.ts names its routes (`CardRoute`), and index.ts lists them in the order of the
 * OpenAPI document (`cardRouteModule`). A card read is `cards:read` and a member's write
 * `cards:write` with a key, both tagged `Cards`, on the object the path's `id` names (`IdParams`)
 * unless the route gives its own `params`; a sandbox step is tagged `Sandbox`.
 */

/** The tag of every card route but the sandbox steps. */
export const tags = ['Cards'];

/** One card route: declared on the public router, with the service context. */
export type CardRoute = (route: Router, ctx: ServiceContext) => void;

/** A route module of card routes (of several sub-areas), registered in the order given. */
export const cardRouteModule = (routes: readonly CardRoute[]): RouteModule =>
  publicRoutes((route, ctx) => {
    for (const declare of routes) declare(route, ctx);
  });

/** The documentation of a card operation. */
export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
}

type Reader = 'member' | 'either' | 'merchant';

/** GET one object (`readOne`) of scope `cards:read`, by the path's id unless `params` says otherwise. */
export function cardRead<R extends TSchema, P extends TSchema = typeof IdParams, const Pr extends Reader = 'either'>(
  spec: Operation & { principal?: Pr; errors?: readonly ErrorCode[]; params?: P; response: R },
) {
  return readOne({ scope: 'cards:read', ...spec, tags, params: (spec.params ?? IdParams) as P });
}

/** GET a page of objects (`readList`) of scope `cards:read`; without `query` a bounded constant list. */
export function cardList<
  I extends TSchema,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  const Pr extends Reader = 'either',
>(spec: Operation & { principal?: Pr; errors?: readonly ErrorCode[]; params?: P; query?: Q; item: I }) {
  return readList({ scope: 'cards:read', ...spec, tags });
}

type Responses = { [status: number]: TSchema };

interface WriteSpec<B, R extends Responses> extends Operation {
  errors: readonly ErrorCode[];
  body?: B;
  response: R;
}

/**
 * A member's write (`memberWrite`: `cards:write`, or `cards:secure` for the reveal screen) with a key, required
 * unless `idempotency` says optional; on the object the path's id names unless `params` says otherwise (`null`: the
 * path names none). `secretBodyFields`: the body's secrets (a PIN), kept out of the key's record.
 */
export function memberWrite<
  const R extends Responses,
  P extends TSchema | null = typeof IdParams,
  B extends TSchema | undefined = undefined,
  const Sc extends 'cards:write' | 'cards:secure' = 'cards:write',
  const I extends 'required' | 'optional' = 'required',
>(spec: WriteSpec<B, R> & { params?: P; scope?: Sc; idempotency?: I; secretBodyFields?: readonly string[] }) {
  const { scope = 'cards:write' as Sc, params, secretBodyFields, ...rest } = spec;
  const write = anyMemberWrite({
    ...rest,
    scope,
    tags,
    params: (params === undefined ? IdParams : (params ?? undefined)) as P extends null ? undefined : P,
  });
  return secretBodyFields ? { ...write, access: { ...write.access, secretBodyFields } } : write;
}

/** A sandbox step (`sandboxStep`) on the object the path's id names, tagged `Sandbox`. */
export function sandboxCardStep<const R extends Responses, B extends TSchema | undefined = undefined>(
  spec: WriteSpec<B, R>,
) {
  const write = merchantWrite({ ...spec, scope: sandboxStep.scope, tags: ['Sandbox'], params: IdParams });
  return { ...write, access: sandboxStep };
}

/**
 * A member opens one of the area's hosted screens (`open`: the supplement, the reveal) on the object the path's id
 * names: a one-time link to it (`Ticket`), answered 201.
 */
export function screenSession(
  path: string,
  spec: Operation & { scope?: 'cards:write' | 'cards:secure'; errors: readonly ErrorCode[] },
  open: (
    ctx: ServiceContext,
    trx: Trx,
    caller: MemberCardCaller,
    id: string,
    origin: string,
  ) => Promise<Static<typeof Ticket>>,
): CardRoute {
  const def = memberWrite({ ...spec, response: { 201: Ticket } });
  return (route, ctx) =>
    route.post(path, def, async ({ principal, params, req, write }) =>
      write((trx) => open(ctx, trx, principal, params.id, hostedOrigin(req))),
    );
}

/** What a handler's input gives a claimed write: `claim` and `replay`. */
interface Claiming {
  claim: <T>(leaseMs: number, effect: Effect<T>) => Promise<ClaimOutcome<T>>;
  replay: (stored: StoredResult) => Sent;
}

/**
 * A write whose effect commits under a claim on the key before the issuer is called: `finish`
 * answers from what the effect committed; a key with a finished result replays it instead.
 */
export async function claimThen<T, R>(
  { claim, replay }: Claiming,
  leaseMs: number,
  effect: Effect<T>,
  finish: (committed: T) => R | Promise<R>,
): Promise<R | Sent> {
  const outcome = await claim(leaseMs, effect);
  return 'replay' in outcome ? replay(outcome.replay) : finish(outcome.value);
}
