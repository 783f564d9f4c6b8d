// Over 300 lines: the one route helper, its typed input, commands (write-model.md) and the mount they share.
import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Transaction } from 'kysely';
import { Type, type Static, type TSchema } from 'typebox';
import type { Database, Environment } from '../db/schema.js';
import type { ServiceContext } from '../service-context.js';
import type { ErrorCode } from './errors.js';
import type { AppInstance } from './http-app.js';
import { claimWrite, executeWrite, sendReplay, type StoredResult } from './idempotency.js';
import { executeGroupedWrite, type BatchEffect } from './write-batch.js';
import type { IdempotencyContext, MemberContext } from './request-context.js';
import type { RouteAccess } from './route-access.js';

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
 */

/** What a route declares in `schema`: TypeBox schemas for the input parts and the answers. */
export interface RouteSchema {
  /** The operation's name in the OpenAPI document (`createMember`): camelCase, unique; required on public routes. */
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  hide?: boolean;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  headers?: TSchema;
  response: { [status: number]: TSchema };
}

/** A public route's schema: it names its operation (generated clients call it by this name). */
export type PublicRouteSchema = RouteSchema & { operationId: string };

/** The merchant behind every authenticated call. */
export interface MerchantPrincipal {
  merchantId: string;
  environment: Environment;
  keyId: string;
  scopes: readonly string[];
}

/** A call made on behalf of a member (`x-on-behalf-of`); `memberId` is `member.id`. */
export interface MemberPrincipal extends MerchantPrincipal {
  member: MemberContext;
  memberId: string;
}

/** Either: a member when `x-on-behalf-of` was sent, the merchant alone otherwise. */
export interface EitherPrincipal extends MerchantPrincipal {
  member?: MemberContext;
  memberId?: string;
}

/** The principal a route's access gives its handler. */
export type PrincipalFor<A extends RouteAccess> = A['scope'] extends 'public'
  ? undefined
  : A['principal'] extends 'member'
    ? MemberPrincipal
    : A['principal'] extends 'either'
      ? EitherPrincipal
      : MerchantPrincipal;

export type Part<S extends RouteSchema, K extends keyof RouteSchema> = S[K] extends TSchema ? Static<S[K]> : undefined;
type SuccessStatus = 200 | 201 | 202;
/** The body a route answers with: its 2xx response schema. */
export type ResultOf<S extends RouteSchema> = {
  [K in keyof S['response']]: K extends SuccessStatus
    ? S['response'][K] extends TSchema
      ? Static<S['response'][K]>
      : never
    : never;
}[keyof S['response']];

declare const sentBrand: unique symbol;
/** The answer was sent (by `write` or `claim`); the handler returns it as is. */
export type Sent = { readonly [sentBrand]: true };

export type Effect<T> = (trx: Transaction<Database>) => Promise<T>;

/**
 * A money write or a member's creation, declared as a command (docs/write-model.md) instead of a
 * handler: the platform runs it, group-committed with the writes that arrive with it, whatever
 * their merchant (write-batch.ts).
 *
 * First the plan, plain data: `plan` makes it from the request alone (no I/O: the write's nonce
 * and its key's record are then read in its batch), `prepare` reads rows and asks providers for it
 * (a rate, a payout date; read-only calls) after the nonce is consumed and a finished result
 * replayed. Then the write: `commit` writes one plan in the batch's transaction (behind a
 * savepoint of its own), re-checking the rows it locks; `commitMany` writes a batch's plans of the
 * route together and answers each one's result or its refusal (an `Error`) in order, a refused
 * plan having written nothing (no savepoint separates them). A write alone is a list of one.
 * `claim`, for a write whose answer needs a provider call after its commit (a QR payment): its
 * `commit` runs in the batch and stores a claim on the key for `leaseMs` instead of a result;
 * after the commit `after` makes the answer (the provider called), which replaces the claim.
 */
export type Command<A extends RouteAccess, S extends RouteSchema, P, C = unknown> = (
  { plan: (input: RouteInput<A, S>) => P } | { prepare: (input: RouteInput<A, S>) => Promise<P> }
) &
  (
    | { commit: (trx: Transaction<Database>, plan: P) => Promise<ResultOf<S>> }
    | { commitMany: (trx: Transaction<Database>, plans: readonly P[]) => Promise<(ResultOf<S> | Error)[]> }
    | { claim: ClaimedWrite<S, P, C> }
  );

/** A command's write whose answer comes after its commit (`Command`'s `claim`). */
export interface ClaimedWrite<S extends RouteSchema, P, C> {
  leaseMs: number;
  commit: (trx: Transaction<Database>, plan: P) => Promise<C>;
  after: (plan: P, committed: C) => Promise<ResultOf<S>>;
}

type AnyCommand = {
  plan?: (input: unknown) => unknown;
  prepare?: (input: unknown) => Promise<unknown>;
  commit?: (trx: Transaction<Database>, plan: unknown) => Promise<unknown>;
  commitMany?: (trx: Transaction<Database>, plans: readonly unknown[]) => Promise<unknown[]>;
  claim?: ClaimedWrite<RouteSchema, unknown, unknown>;
};

/** A claimed write's first step: the value, or the key's finished result (sent by the helper). */
export type ClaimOutcome<T> = { value: T } | { replay: StoredResult };

export interface RouteInput<A extends RouteAccess, S extends RouteSchema> {
  principal: PrincipalFor<A>;
  params: Part<S, 'params'>;
  query: Part<S, 'querystring'>;
  body: Part<S, 'body'>;
  headers: Part<S, 'headers'>;
  /** The key of this call; present whenever the route requires one. */
  idempotency: A['idempotency'] extends 'required' ? IdempotencyContext : IdempotencyContext | undefined;
  /**
   * Runs `effect` in one transaction with the idempotency record (`executeWrite`): the result is
   * serialized through the response schema before it is stored, then sent. Money writes are
   * commands instead (`Command`).
   */
  write: (effect: Effect<ResultOf<S>>) => Promise<Sent>;
  /**
   * For a write whose effect commits before a provider call (`claimWrite`): commits the effect
   * with a claim on the key; the handler then calls out and returns the result (or
   * `replay(outcome.replay)` when the key already has one).
   */
  claim: <T>(leaseMs: number, effect: Effect<T>) => Promise<ClaimOutcome<T>>;
  /** Sends the key's finished result found by `claim`. */
  replay: (stored: StoredResult) => Sent;
  /**
   * For work that is neither one `write` nor a `claim`ed effect (an outside call, or transactions
   * of its own): `work` runs under a claim on the key, so that the same key meanwhile answers 409
   * `idempotency_in_progress` and later replays; with a finished result `work` does not run and
   * that result is sent. Unlocked, requests with one key sent together each ran the work. The
   * claim lapses after `onceLeaseMs` (a holder that stopped).
   */
  once: <T>(work: () => Promise<T>) => Promise<T | Sent>;
  /** The request, for what the input does not carry (client address, environment by host). */
  req: FastifyRequest;
}

export interface RouteDefinition<A extends RouteAccess, S extends PublicRouteSchema> {
  access: A;
  /** Codes the handler can answer beyond those its access implies; read by the OpenAPI document. */
  errors?: readonly ErrorCode[];
  schema: S;
  /** Fastify hooks a route may still need (e.g. an optional body defaulted before validation). */
  preValidation?: (req: FastifyRequest) => Promise<void>;
}

export type RouteHandler<A extends RouteAccess, S extends PublicRouteSchema> = (
  input: RouteInput<A, S>,
) => Promise<ResultOf<S> | Sent>;

const isCommand = (h: unknown): h is AnyCommand => typeof h === 'object' && h !== null;

/** The status a route answers on success: the 2xx its response schema declares (200 if none). */
export function successStatus(schema: RouteSchema): number {
  const codes = Object.keys(schema.response)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b);
  return codes[0] ?? 200;
}

function principalOf(req: FastifyRequest, access: RouteAccess): MerchantPrincipal | MemberPrincipal | undefined {
  if (access.scope === 'public') return undefined;
  const auth = req.auth;
  // The onRequest hook authenticates every non-public route before its handler: a bug otherwise.
  if (!auth) throw new Error(`route: ${req.method} ${req.url} reached its handler without a principal`);
  const merchant: MerchantPrincipal = {
    merchantId: auth.merchantId,
    environment: auth.environment,
    keyId: auth.keyId,
    scopes: auth.scopes,
  };
  if (req.member) return { ...merchant, member: req.member, memberId: req.member.id };
  if (access.principal === 'member')
    throw new Error(`route: ${req.method} ${req.url} reached its handler without its member`);
  return merchant;
}

/** How long `once` holds a key: up to four outside calls in turn, each within the upstream deadline, and 10 s besides.
 * */
export const onceLeaseMs = (ctx: ServiceContext): number => 4 * ctx.config.upstreamCallTimeoutMs + 10_000;

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

/**
 * What a public route's handler receives. The parts are read from the request when the handler
 * asks for them (it destructures what it uses), and `write`, `claim` and `replay` are made only
 * then: building every part and three closures for each request was a measurable share of a
 * read's CPU. Read its parts by name (destructuring); a spread would not copy them.
 */
class PublicRouteInput {
  constructor(
    readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly ctx: ServiceContext,
    private readonly access: RouteAccess,
    private readonly core: Core,
    private readonly batchEffects: WeakMap<NonNullable<AnyCommand['commitMany']>, BatchEffect>,
  ) {}

  get principal() {
    return principalOf(this.req, this.access);
  }
  get params() {
    return this.req.params;
  }
  get query() {
    return this.req.query;
  }
  get body() {
    return this.req.body;
  }
  get headers() {
    return this.req.headers;
  }
  get idempotency() {
    return this.req.idempotency;
  }

  get write() {
    const {
      req,
      reply,
      ctx,
      core: { status, mapped },
    } = this;
    return async (effect: Effect<unknown>) =>
      (await executeWrite(ctx.db, req, reply, async (trx) => ({
        status,
        body: await mapped(effect)(trx),
      }))) as unknown as Sent;
  }

  /**
   * Runs a command (`Command`): its plan, then its write through the group committer. Answers the
   * sent reply, or a claimed command's answer made after the commit, which `mount` sends.
   */
  async run(command: AnyCommand): Promise<Sent | unknown> {
    const {
      req,
      reply,
      ctx,
      core: { status, mapped },
      batchEffects,
    } = this;
    const plan = command.plan ? command.plan(this) : await command.prepare!(this);
    const many = command.commitMany;
    let single: Effect<unknown>;
    let batch: { effect: BatchEffect; item: unknown } | undefined;
    if (many) {
      single = async (trx) => {
        const [answer] = await many(trx, [plan]);
        if (answer instanceof Error) throw answer;
        return answer;
      };
      let effect = batchEffects.get(many);
      if (!effect) {
        effect = async (trx, plans) =>
          (await many(trx, plans)).map((a) =>
            a instanceof Error ? (ctx.mapDomainError(a) ?? a) : { status, body: a },
          );
        batchEffects.set(many, effect);
      }
      batch = { effect, item: plan };
    } else {
      const one = command.commit ?? command.claim!.commit;
      single = (trx) => one(trx, plan);
    }
    const run = async (trx: Transaction<Database>) => ({ status, body: await mapped(single)(trx) });
    const claim = command.claim;
    const options = { ...(batch ? { batch } : {}), ...(claim ? { claimLeaseMs: claim.leaseMs } : {}) };
    const done = await executeGroupedWrite(
      ctx.db,
      ctx.writeGroup,
      ctx.config.groupCommitPartition,
      req,
      reply,
      run,
      options,
    );
    if (claim && 'claimed' in done) return claim.after(plan, done.claimed);
    return done as unknown as Sent;
  }

  get claim() {
    const {
      req,
      ctx,
      core: { mapped },
    } = this;
    return <T>(leaseMs: number, effect: Effect<T>) => claimWrite(ctx.db, req, leaseMs, mapped(effect));
  }

  get replay() {
    const reply = this.reply;
    return (stored: StoredResult) => sendReplay(reply, stored) as unknown as Sent;
  }

  get once() {
    const { req, reply, ctx } = this;
    return async <T>(work: () => Promise<T>): Promise<T | Sent> => {
      if (!req.idempotency) return work();
      const held = await claimWrite(ctx.db, req, onceLeaseMs(ctx), async () => undefined);
      if ('replay' in held) return sendReplay(reply, held.replay) as unknown as Sent;
      return work();
    };
  }
}

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

export interface Router {
  get: Shorthand;
  post: Shorthand;
  patch: Shorthand;
  put: Shorthand;
  delete: Shorthand;
}

/** `router(app, ctx).post(url, { access, errors, schema }, handler)`: see the top of this file. */
export function router(app: AppInstance, ctx: ServiceContext): Router {
  const on =
    (method: HTTPMethods): Shorthand =>
    (url, def, handler) =>
      defineRoute(app, ctx, method, url, def, handler);
  return { get: on('GET'), post: on('POST'), patch: on('PATCH'), put: on('PUT'), delete: on('DELETE') };
}
