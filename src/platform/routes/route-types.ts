import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Static, TSchema } from 'typebox';
import type { Database, Environment } from '../../db/schema.js';
import type { ErrorCode } from '../errors.js';
import type { StoredResult } from '../queries/idempotency.js';
import type { IdempotencyContext, MemberContext } from '../http/request-context.js';
import type { WriteMode, writeAlone } from '../writes/write-batch.js';
import type { RouteAccess } from './route-access.js';

/** The types of a typed route (route.ts): what it declares, what its handler receives and answers. */

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
    | {
        commitMany: (
          trx: Transaction<Database>,
          plans: readonly P[],
          mode: WriteMode,
        ) => Promise<(ResultOf<S> | Error | typeof writeAlone)[]>;
        /**
         * The batch effect locks rows of its own (a card) before its postings: its batch takes no
         * merchant's write lock first, each is taken at the postings, after those rows (docs/locking.md).
         */
        locksRowsFirst?: boolean;
      }
    | { claim: ClaimedWrite<S, P, C> }
  );

/** A command's write whose answer comes after its commit (`Command`'s `claim`). */
export interface ClaimedWrite<S extends RouteSchema, P, C> {
  leaseMs: number;
  commit: (trx: Transaction<Database>, plan: P) => Promise<C>;
  after: (plan: P, committed: C) => Promise<ResultOf<S>>;
}

/** Any command, as the helper runs it (`Command` with its types erased). */
export type AnyCommand = {
  plan?: (input: unknown) => unknown;
  prepare?: (input: unknown) => Promise<unknown>;
  commit?: (trx: Transaction<Database>, plan: unknown) => Promise<unknown>;
  commitMany?: (trx: Transaction<Database>, plans: readonly unknown[], mode: WriteMode) => Promise<unknown[]>;
  locksRowsFirst?: boolean;
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
   * `write` of an effect given the caller's present, read in its transaction (`ctx.clock.now`: a
   * sandbox merchant's own clock).
   */
  writeNow: (effect: (trx: Transaction<Database>, now: Date) => Promise<ResultOf<S>>) => Promise<Sent>;
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
