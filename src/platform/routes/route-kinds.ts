// Over 300 lines: every kind of route, public and operator, in the one file a route's author is pointed to.
import { Type, type TLiteral, type TSchema } from 'typebox';
import { ApiError, type ErrorCode } from '../errors.js';
import { OperatorEnvironment, OperatorIdParams, type OperatorRouteDefinition } from './operator-route.js';
import { PageQuery, listEnvelope } from './pagination.js';
import type { RouteAccess } from './route-access.js';
import type { RouteDefinition } from './route-types.js';
import type { Scope } from '../auth/scopes.js';

/**
 * The route kinds every area declares alike (see "Writing a route" in docs/architecture.md): reading
 * one object by its id, listing objects, a member's or the merchant's write, and the operator's reads
 * and writes of catalogues and orders. Each helper builds the `{ access, errors, schema }` a route
 * shorthand takes from what differs between areas; the conventions of the kind (who may call, the
 * success status, the page envelope, the idempotency key) are set here once:
 *
 *   route.get(
 *     '/v1/withdrawals/:id',
 *     readOne({
 *       scope: 'withdrawals:read',
 *       errors: withdrawalErrors.get,
 *       operationId: 'getWithdrawal',
 *       summary: 'Get a withdrawal',
 *       description: memberSeesOwnOnly,
 *       tags,
 *       params: idParams('wdr_ prefix optional'),
 *       response: Withdrawal,
 *     }),
 *     async ({ principal, params }) => getWithdrawal(db, principal, params.id),
 *   );
 *
 * The helpers write the schema's keys in the order the routes always had, and leave out what a
 * route does not say: the OpenAPI documents come out the same as from the spelled-out declaration.
 */

/**
 * An `id` path parameter, at most 100 characters unless `maxLength` says otherwise. `description`
 * (or the string given alone) names the id's prefix: `idParams('wdr_ prefix optional')`.
 */
export function idParams(options: string | { description?: string; maxLength?: number } = {}) {
  const { description, maxLength = 100 } = typeof options === 'string' ? { description: options } : options;
  return Type.Object({ id: Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) }) });
}

/** A schema that also takes `null` (a field not set yet, a limit that is none). */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A page query (`limit`, `cursor`) with an optional `status` filter taking one of `statuses`;
 * `options` go on the filter's schema (its description).
 */
export function statusPageQuery<const S extends readonly string[]>(statuses: S, options?: { description: string }) {
  const literals = statuses.map((s) => Type.Literal(s)) as TLiteral<S[number]>[];
  return Type.Object({ ...PageQuery.properties, status: Type.Optional(Type.Union(literals, options)) });
}

/**
 * The access of a sandbox step (`POST /v1/sandbox/...`): the merchant moves one of its objects on
 * as a provider would (only in the sandbox), with a key, like any write.
 */
export const sandboxStep = {
  scope: 'merchant:read',
  principal: 'merchant',
  idempotency: 'required',
  sandboxOnly: true,
} as const satisfies RouteAccess;

/** The description of a read that a member makes of its own objects and the merchant of all. */
export const memberSeesOwnOnly = "On behalf of a member, only that member's own.";

/** The description of a list whose member sees its own `objects` and whose merchant sees all, newest first. */
export const memberListsOwn = (objects: string) =>
  `On behalf of a member: that member's ${objects}; as the merchant: all of them. Newest first.`;

/** The documentation of an operation: its name, and its summary, description and tags when it has them. */
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
}

/** Who may read: the member its own objects, the merchant too (`either`, the default), or the merchant alone. */
type Reader = 'member' | 'either' | 'merchant';

function operation(spec: Operation) {
  const { operationId, summary, description, tags } = spec;
  return {
    operationId,
    ...(summary !== undefined ? { summary } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(tags !== undefined ? { tags } : {}),
  };
}

function access<Sc extends Scope, Pr extends Reader>(scope: Sc, principal: Pr | undefined) {
  return { scope, principal: principal ?? 'either' } as { scope: Sc; principal: Pr };
}

const withErrors = (errors: readonly ErrorCode[] | undefined) => (errors ? { errors } : {});

/** The input parts a spec gives (`params`, `query`, `body`) as schema keys, in the document's order. */
const inputParts = (spec: { params?: TSchema; query?: TSchema; body?: TSchema }) => ({
  ...(spec.params ? { params: spec.params } : {}),
  ...(spec.query ? { querystring: spec.query } : {}),
  ...(spec.body ? { body: spec.body } : {}),
});

/**
 * GET one object by its path's parameters (`params`, usually `idParams(...)`): answers 200 with
 * `response`. The handler loads it for the principal (a member only its own).
 */
export function readOne<
  const Sc extends Scope,
  P extends TSchema,
  R extends TSchema,
  const Pr extends Reader = 'either',
>(
  spec: Operation & { scope: Sc; principal?: Pr; errors?: readonly ErrorCode[]; params: P; response: R },
): RouteDefinition<{ scope: Sc; principal: Pr }, Operation & { operationId: string; params: P; response: { 200: R } }> {
  return {
    access: access(spec.scope, spec.principal),
    ...withErrors(spec.errors),
    schema: { ...operation(spec), params: spec.params, response: { 200: spec.response } },
  };
}

/**
 * GET a page of objects (`query`: `PageQuery`, or `statusPageQuery(...)`, or the list's own filters),
 * of the object its path names when it has `params` (a card's top-ups): answers 200 with a
 * `listEnvelope` of `item`. A list with no query is a bounded constant list.
 */
export function readList<
  const Sc extends Scope,
  I extends TSchema,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  const Pr extends Reader = 'either',
>(
  spec: Operation & { scope: Sc; principal?: Pr; errors?: readonly ErrorCode[]; params?: P; query?: Q; item: I },
): RouteDefinition<{ scope: Sc; principal: Pr }, ListSchema<P, Q, I>> {
  return {
    access: access(spec.scope, spec.principal),
    ...withErrors(spec.errors),
    schema: {
      ...operation(spec),
      ...inputParts(spec),
      response: { 200: listEnvelope(spec.item) },
    } as ListSchema<P, Q, I>,
  };
}

type ListSchema<P, Q, I extends TSchema> = Operation & {
  operationId: string;
  params: P;
  querystring: Q;
  response: { 200: ReturnType<typeof listEnvelope<I>> };
};

/** What a write answers: its success status (201 for what it creates, 200 otherwise) and schema. */
type Responses = { [status: number]: TSchema };

/** Whether a write takes an idempotency key: `required` (the default of the write kinds), `optional` or `none`. */
type Keyed = 'required' | 'optional' | 'none';

/** A write's schema, its keys in the order the OpenAPI document has always had them. */
type WriteSchema<P, Q, B, R extends Responses> = Operation & {
  operationId: string;
  params: P;
  querystring: Q;
  body: B;
  response: R;
};

type WriteSpec<Sc, I, P, Q, B, R> = Operation & {
  scope: Sc;
  idempotency?: I;
  errors?: readonly ErrorCode[];
  params?: P;
  query?: Q;
  body?: B;
  response: R;
};

/**
 * The write kind of `principal`: the write's access (a key `required` unless the spec says
 * otherwise), its errors and its schema, the spec's types kept.
 */
const writeKind =
  <Pr extends 'member' | 'merchant'>(principal: Pr) =>
  <
    const Sc extends Scope,
    const R extends Responses,
    P extends TSchema | undefined = undefined,
    Q extends TSchema | undefined = undefined,
    B extends TSchema | undefined = undefined,
    const I extends Keyed = 'required',
  >(
    spec: WriteSpec<Sc, I, P, Q, B, R>,
  ): RouteDefinition<{ scope: Sc; principal: Pr; idempotency: I }, WriteSchema<P, Q, B, R>> => ({
    access: { scope: spec.scope, principal, idempotency: spec.idempotency ?? ('required' as I) },
    ...withErrors(spec.errors),
    schema: {
      ...operation(spec),
      ...inputParts(spec),
      response: spec.response,
    } as WriteSchema<P, Q, B, R>,
  });

/**
 * A member's write (POST, PATCH, DELETE on behalf of a member), with an idempotency key unless
 * `idempotency` says `optional` or `none`: answers `response` (`{ 201: ... }` for what it creates).
 */
export const memberWrite = writeKind('member');

/**
 * The merchant's own write (a member's objects among them, never on a member's behalf), with an
 * idempotency key unless `idempotency` says `optional` or `none`: answers `response`.
 */
export const merchantWrite = writeKind('merchant');

/** The query of an operator's list of one environment's rows (a catalogue's). */
export const EnvironmentQuery = Type.Object({ environment: OperatorEnvironment });

/**
 * The operator's GET of a list of `item`s (a catalogue's rows), of the object its path names when it
 * has `params`, filtered by `query` (`EnvironmentQuery`, or the list's own): answers 200 with a
 * `listEnvelope` of `item`.
 */
export function operatorList<
  I extends TSchema,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
>(spec: {
  operationId: string;
  errors?: readonly ErrorCode[];
  params?: P;
  query?: Q;
  item: I;
}): OperatorRouteDefinition<ListSchema<P, Q, I>> {
  return {
    ...withErrors(spec.errors),
    schema: {
      operationId: spec.operationId,
      ...inputParts(spec),
      response: { 200: listEnvelope(spec.item) },
    } as ListSchema<P, Q, I>,
  };
}

/**
 * The operator's GET of one object by its path's parameters (`params`): answers 200 with
 * `response`, and `not_found` (or the `errors` given) when there is none.
 */
export function operatorReadOne<P extends TSchema, R extends TSchema>(spec: {
  operationId: string;
  errors?: readonly ErrorCode[];
  params: P;
  response: R;
}): OperatorRouteDefinition<{ operationId: string; params: P; response: { 200: R } }> {
  const { operationId, errors = ['not_found'], params, response } = spec;
  return { errors, schema: { operationId, params, response: { 200: response } } };
}

/** An operator write's schema (`params` and `body` left out where undefined), in the order the routes always had it. */
type OperatorWriteSchema<P, B, R extends Responses> = { operationId: string; params: P; body: B; response: R };

/**
 * The operator's POST of a new object from `body` (a catalogue's row; of the object its path's
 * `params` name, a merchant's key): answers 201 with `response`.
 */
export function operatorCreate<B extends TSchema, R extends TSchema, P extends TSchema | undefined = undefined>(spec: {
  operationId: string;
  errors?: readonly ErrorCode[];
  params?: P;
  body: B;
  response: R;
}): OperatorRouteDefinition<OperatorWriteSchema<P, B, { 201: R }>> {
  const schema = { operationId: spec.operationId, ...inputParts(spec), response: { 201: spec.response } };
  return { ...withErrors(spec.errors), schema: schema as OperatorWriteSchema<P, B, { 201: R }> };
}

/**
 * The operator's change (PATCH, PUT, or a POST of an action) of the object its path's parameters
 * (`params`) name, with `body` when it takes one: answers 200 with `response`, and `not_found` (or
 * the `errors` given) when there is none.
 */
export function operatorUpdate<P extends TSchema, R extends TSchema, B extends TSchema | undefined = undefined>(spec: {
  operationId: string;
  errors?: readonly ErrorCode[];
  params: P;
  body?: B;
  response: R;
}): OperatorRouteDefinition<OperatorWriteSchema<P, B, { 200: R }>> {
  const schema = { operationId: spec.operationId, ...inputParts(spec), response: { 200: spec.response } };
  return { errors: spec.errors ?? ['not_found'], schema: schema as OperatorWriteSchema<P, B, { 200: R }> };
}

/**
 * The operator's decision on an open (typically suspended) provider order, `POST .../:id/resolve`
 * (`resolveByHand`: the provider is asked first): `completed` or `failed`, answered 200 with the
 * order's operator view (`response`); an order already final is `state_invalid`.
 */
export function operatorResolve<R extends TSchema>(spec: { operationId: string; response: R }) {
  return operatorUpdate({
    operationId: spec.operationId,
    errors: ['not_found', 'state_invalid'],
    params: OperatorIdParams,
    body: Type.Object({ status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }),
    response: spec.response,
  });
}

/** The object a handler looked up, or `not_found` with `message` (`No such asset.`) when there is none. */
export function orNotFound<T>(found: T | undefined | null, message: string): T {
  if (found === undefined || found === null) throw new ApiError('not_found', message);
  return found;
}
