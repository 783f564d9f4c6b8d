import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './db/schema.js';
import type { DatabaseKind } from './db/connection.js';
import type { Config } from './platform/config/config.js';
import type { Metrics } from './platform/telemetry/metrics.js';
import type { ApiCallLog } from './platform/telemetry/api-call-log.js';
import type { DomainErrorMapper } from './platform/errors.js';
import type { MemberResolver } from './platform/http/request-context.js';
import type { Upstreams } from './upstreams/index.js';
import type { Clock } from './platform/clock.js';
import type { AuthCache } from './platform/auth/auth-cache.js';
import type { MemberCache } from './platform/auth/member-cache.js';
import type { RateWindows } from './platform/auth/rate-limit.js';
import type { WriteGroup } from './platform/writes/write-batch.js';
import type { NonceBatcher } from './platform/writes/nonce-batch.js';

/** What every route module and job receives: built once at start-up, passed explicitly. */
/** An operator alert raised outside a business area (see `ServiceContext.alertOperator`). */
export interface OperatorAlert {
  kind: string;
  object?: string;
  objectId?: string;
  message: string;
}

export interface ServiceContext {
  config: Config;
  db: Kysely<Database>;
  databaseKind: DatabaseKind;
  metrics: Metrics;
  apiCallLog: ApiCallLog;
  /** Access-token lifetime (config `tokenTtlSeconds`); 30 minutes by the reference, shortened only by tests. */
  tokenTtlSeconds: number;
  /**
   * Real time in milliseconds for the request-security windows (timestamp tolerance, nonce
   * window); `Date.now` except in tests, which move it instead of waiting five minutes.
   */
  requestClock: () => number;
  /**
   * The one clock of every time-dependent business rule (extensions 8): real time in production,
   * each merchant's own forward-only time in the sandbox. Never `Date.now()` in a rule.
   */
  clock: Clock;
  /** false silences request logs (tests and benchmarks). */
  logger: boolean;
  /** The log of work outside requests (jobs, tickers, the API call log writer): pino, JSON lines on stdout. */
  log: FastifyBaseLogger;
  /** The on-behalf-of lookup the HTTP pipeline uses (the members area's `resolveMember`). */
  resolveMember: MemberResolver;
  /** Maps domain errors (the ledger's) to the reference's codes at the API edge (`src/api-errors.ts`). */
  mapDomainError: DomainErrorMapper;
  /**
   * Raises an operator alert (the alerts area's `raiseAlert`, injected by the composition root:
   * the job runner imports no module). Used where nothing else would tell the operator, such as a
   * background job parked as dead. Given a transaction, the alert is written in it (with the
   * state change it reports).
   */
  alertOperator: (alert: OperatorAlert, db?: Transaction<Database>) => Promise<unknown>;
  /** Provider adapters (remittance, card, qrpay, chain), chosen by configuration at start-up. */
  upstreams: Upstreams;
  /** Token, key and merchant state held by this process, emptied by the database's change notifications. */
  authCache: AuthCache;
  /** Who `x-on-behalf-of` names, held by this process and forgotten on the members' change notifications
   * (member-cache.ts). */
  memberCache: MemberCache;
  /** The shared rate windows, counted in memory far from the limit (rate-limit.ts). */
  rateWindows: RateWindows;
  /** The group committer of the routes whose writes are `commit: 'grouped'` (group-commit.ts). */
  writeGroup: WriteGroup;
  /** The nonces of signed requests that arrive together, consumed in one statement (nonce-batch.ts). */
  nonces: NonceBatcher;
  /**
   * Subscribes to a database notification channel (the database handle's `listen`: LISTEN on
   * PostgreSQL, in-process on the embedded database); absent where nothing can listen (a test
   * context), then a caller polls. The event stream uses it (modules/events/stream.ts).
   */
  listen?: (
    channel: string,
    onNotify: (payload: string) => void,
    onListening: (listening: boolean) => void,
  ) => Promise<() => Promise<void>>;
}
