import type { Environment } from '../db/schema.js';
import type { RouteAccess } from './route-access.js';

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

export interface IdempotencyContext {
  key: string;
  endpoint: string;
  requestHash: string;
  /** The stored result was written (by executeWrite or onSend); nothing more to store. */
  settled: boolean;
  /** Errors about the key itself are never stored as its result. */
  noStore: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
    auth?: AuthContext;
    member?: MemberContext;
    idempotency?: IdempotencyContext;
    environment: Environment;
    startedAt: bigint;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}
