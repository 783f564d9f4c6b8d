import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import type { ClockScope } from '../platform/clock.js';

/** The statements of the job queue (docs/jobs.md): what areas enqueue with, and the runner's claims. */

export interface JobSpec {
  kind: string;
  payload?: Record<string, unknown>;
  /** Not before this moment (on `clock`'s time when one is given). */
  runAt?: Date;
  /**
   * The merchant whose clock the job's time is on: a sandbox scope makes `runAt` (and the delay of
   * every retry) a time on that merchant's clock, so advancing it brings the job forward. A
   * production scope, or none, is real time.
   */
  clock?: ClockScope;
  /** At most one live job per key: a second enqueue with the key is a no-op. */
  dedupeKey?: string;
  maxAttempts?: number;
}

export interface ClaimedJob {
  id: bigint;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
}

/** Enqueues in the caller's transaction, so a job exists exactly when the change that needs it does. */
export async function enqueue(db: Db, job: JobSpec): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      kind: job.kind,
      payload: JSON.stringify(job.payload ?? {}),
      dedupe_key: job.dedupeKey ?? null,
      ...(job.clock?.environment === 'sandbox' ? { clock_merchant_id: job.clock.merchantId } : {}),
      ...(job.runAt ? { run_at: job.runAt } : {}),
      ...(job.maxAttempts ? { max_attempts: job.maxAttempts } : {}),
      locked_until: null,
      last_error: null,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute();
}

/** `enqueue` for many jobs in one statement (same rules: a live dedupe key makes its job a no-op). */
export async function enqueueMany(db: Db, jobs: readonly JobSpec[]): Promise<void> {
  if (jobs.length === 0) return;
  // One shape for every row: unset times and attempts take the column defaults' values.
  await db
    .insertInto('jobs')
    .values(
      jobs.map((job) => ({
        kind: job.kind,
        payload: JSON.stringify(job.payload ?? {}),
        dedupe_key: job.dedupeKey ?? null,
        clock_merchant_id: job.clock?.environment === 'sandbox' ? job.clock.merchantId : null,
        run_at: job.runAt ?? sql<Date>`now()`,
        max_attempts: job.maxAttempts ?? sql<number>`DEFAULT`,
        locked_until: null,
        last_error: null,
      })) as never,
    )
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute();
}

/** A job's own time: real time plus the sandbox offset of the merchant whose clock it is on (0 for none). */
const jobClockOffset = sql`COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id =
  jobs.clock_merchant_id), 0) * interval '1 millisecond'`;

/**
 * Claims due jobs under a lease. Locked rows are skipped, so processes never claim the same job.
 * A job is due when its clock's time reaches `run_at`: real time, or its sandbox merchant's time.
 * The bound `run_at <= now() + the largest offset` keeps the index range of the plain query.
 */
export async function claim(
  db: Kysely<Database>,
  kinds: string[],
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedJob[]> {
  if (kinds.length === 0) return [];
  const { rows } = await sql<ClaimedJob>`
    UPDATE jobs SET locked_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM jobs
      WHERE status = 'pending'
        AND run_at <= now() + (SELECT COALESCE(max(offset_ms), 0) FROM sandbox_clocks) * interval '1 millisecond'
        AND run_at <= now() + ${jobClockOffset}
        AND (locked_until IS NULL OR locked_until < now())
        AND kind = ANY(${sql.val(kinds)}::text[])
      ORDER BY run_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, kind, payload, attempts, max_attempts
  `.execute(db);
  return rows;
}

/**
 * A claim is its job's attempt count: a later claim (after this one's lease ended) raised it, so
 * the writes of an earlier claim, still running, touch nothing.
 */
const heldBy = (job: Pick<ClaimedJob, 'id' | 'attempts'>) => (eb: ExpressionBuilder<Database, 'jobs'>) =>
  eb.and([
    eb('id', '=', job.id.toString() as unknown as bigint),
    eb('attempts', '=', job.attempts),
    eb('status', '=', 'pending'),
  ]);

/** Extends the lease of a job still running (the runner renews it well before it ends); false: the claim was lost. */
export async function renewLease(db: Db, job: ClaimedJob, leaseSeconds: number): Promise<boolean> {
  const row = await db
    .updateTable('jobs')
    .set({ locked_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` })
    .where(heldBy(job))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes finished jobs (each still held by its claim), in one statement. */
export async function complete(db: Db, jobs: readonly ClaimedJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .deleteFrom('jobs')
    .where((eb) => eb.or(jobs.map((job) => heldBy(job)(eb))))
    .execute();
}

/**
 * Backs off (`delayMs` on the job's clock), or parks the job as `dead` (kept for the operator) once its attempts are
 * spent.
 * False: the claim was lost (another claim holds the job), nothing was written.
 */
export async function retryLater(
  db: Db,
  job: ClaimedJob,
  delayMs: number,
  error: string,
  uncounted = false,
): Promise<boolean> {
  const dead = !uncounted && job.attempts >= job.max_attempts;
  const result = await db
    .updateTable('jobs')
    .set({
      ...(uncounted ? { attempts: sql<number>`attempts - 1` } : {}),
      status: dead ? 'dead' : 'pending',
      run_at: sql<Date>`now() + ${jobClockOffset} + make_interval(secs => ${delayMs / 1000})`,
      locked_until: null,
      last_error: error.slice(0, 2000),
    })
    .where(heldBy(job))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives back claimed jobs that were not started (shutdown), so another process takes them at once. */
export async function release(db: Db, ids: bigint[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('jobs')
    .set((eb) => ({ locked_until: null, attempts: eb('attempts', '-', 1) }))
    .where(
      'id',
      'in',
      ids.map((i) => i.toString() as unknown as bigint),
    )
    .execute();
}
