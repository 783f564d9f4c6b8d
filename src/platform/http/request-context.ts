import type { Kysely } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { RouteAccess, RouteKeys } from '../routes/route-access.js';
import type { NonceUse } from '../writes/nonces.js';

export interface AuthContext {
  merchantId: string;
  environment: Environment;
  keyId: string;
  scopes: string[];
  signingKey: string;
  merchantStatus: string;
}

export interface MemberContext {
  id: string;
  externalMemberId: string;
  kycLevel: number;
}

/** A member as the on-behalf-of step needs it. */
export interface ResolvedMember {
  id: string;
  external_member_id: string;
  kyc_level: number;
  status: string;
}

/**
 * Finds the member `x-on-behalf-of` names (`mem_<uuid>` or the merchant's external id). The
 * members area provides it; the composition root puts it on the service context.
 */
export interface MemberResolver {
  (
    db: Kysely<Database>,
    merchantId: string,
    environment: Environment,
    idOrExternal: string,
  ): Promise<ResolvedMember | undefined>;
  /** A member the resolver holds in memory, without a promise; undefined when it would have to read. */
  held?: (merchantId: string, environment: Environment, idOrExternal: string) => ResolvedMember | undefined;
}

export interface IdempotencyContext {
  key: string;
  endpoint: string;
  requestHash: string;
  /** The stored result was written (by executeWrite or onSend); nothing more to store. */
  settled: boolean;
  /** Errors about the key itself are never stored as its result. */
  noStore: boolean;
  /** The request-security clock (`ServiceContext.requestClock`, ms): an in-progress claim's lease runs on it. */
  now: () => number;
  /**
   * A grouped write's verified nonce, left for its batch to consume in the batch's transaction
   * (write-batch.ts; docs/group-commit.md "Nonces in the batch").
   */
  nonce?: NonceUse;
}

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
    auth?: AuthContext;
    member?: MemberContext;
    idempotency?: IdempotencyContext;
    environment: Environment;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Set by the public pipeline when the route is registered (pipeline.ts): its keys, by method. */
    keys?: Readonly<Record<string, RouteKeys>>;
    /**
     * The route reads nothing of the request (no path parameter, query, header or body): it runs
     * no hook of the base app (http-app.ts), its handler sets the request id. /healthz.
     */
    readsNoInput?: boolean;
  }
}
