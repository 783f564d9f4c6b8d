import type { ServiceContext } from '../service-context.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ClockScope } from '../platform/clock.js';
import type { ClaimedJob } from './queries.js';

/** Runs one claimed job of its kind; throw to fail the attempt, `RetryLater` to try again without it counting. */
export type JobHandler = (job: ClaimedJob, ctx: ServiceContext) => Promise<void>;

/** The handlers of the job kinds a runner takes: one job at a time, or a batch handler. */
export type JobHandlers = Record<string, JobHandler | JobBatchHandler>;

/**
 * Runs the claimed jobs of its kind that one poll took, together (a provider order's dispatch: one
 * claim of many orders, one record of many outcomes), and answers each job's outcome in order:
 * `undefined` when it is done, or what its run threw (an `Error`, `RetryLater`). Throwing fails
 * them all. The jobs are completed in one statement.
 */
export interface JobBatchHandler {
  many(jobs: readonly ClaimedJob[], ctx: ServiceContext): Promise<readonly unknown[]>;
}

/** A handler asks for a later attempt without it counting as an error (e.g. the upstream has no answer yet). */
export class RetryLater extends Error {
  /** `countsAsAttempt` false: the job did not start its work (e.g. its endpoint was busy); its runs are not used up. */
  constructor(
    readonly delayMs: number,
    message = 'retry later',
    readonly countsAsAttempt = true,
  ) {
    super(message);
  }
}

/**
 * A queue kept in an area's own table and claimed in batches (webhook deliveries: the records
 * are the queue, docs/webhooks.md), for work too frequent to pay a job row and two transactions
 * per item. The job runner polls it beside the jobs table, and `drain()` waits for it too.
 */
export interface BatchQueue {
  name: string;
  /** One worker per runner (per process); `wake` asks the runner for a poll now (work finished, a slot is free). */
  create(ctx: ServiceContext, wake: () => void): BatchWorker;
}

export interface BatchWorker {
  /**
   * Claims what is due within the worker's own bounds and starts it without waiting for it;
   * answers how many items it started. Reports its own failures; never rejects.
   */
  poll(): Promise<number>;
  /** Items started and not yet recorded. */
  inFlight(): number;
  /** Resolves when the next item in flight is recorded (at once when none is). */
  settled(): Promise<void>;
  /** Stops claiming and waits until every item started is recorded. */
  stop(): Promise<void>;
}

/**
 * Periodic work. Every ticker must be safe to run in several processes at once (SKIP LOCKED claims
 * or idempotent deletes), because each process runs its own.
 */
export interface Ticker {
  name: string;
  intervalMs: number;
  run(ctx: ServiceContext): Promise<void>;
}

/**
 * Work that falls due at a time on a merchant's clock (a retry, an expiry, an accrual, an
 * executor): the one thing `POST /v1/sandbox/clock/advance` needs from an area, so that advancing
 * runs it "as if that time had passed" (extensions 8, docs/clock.md). An area exports its
 * processes from its workers.ts; src/background.ts lists them (`timedProcesses`).
 *
 * The contract:
 * - `nextDue` answers the earliest time on the scope's clock at which `runDue` has something it
 *   can do now, or null. It leaves out what it cannot act on (e.g. a record leased by a worker
 *   in flight), so that it never answers a time it would not move past.
 * - `runDue(ctx, scope, now)` does everything of the scope due at or before `now` (a time on the
 *   scope's clock, which the advance has just set), in its own transactions, exactly as its
 *   background worker would: the same claims, so running beside the worker is safe. Afterwards
 *   `nextDue` answers a time after `now`, or null. It bounds its own batches.
 * - Both are cheap when nothing is due: the advance asks every process at every step.
 */
export interface TimedProcess {
  /** Unique, dotted (`webhook.retry`); used in logs and in the order of processes due at one time. */
  name: string;
  nextDue(db: Kysely<Database>, scope: ClockScope): Promise<Date | null>;
  runDue(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<void>;
}
