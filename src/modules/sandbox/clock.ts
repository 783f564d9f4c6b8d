/**
 * The sandbox clock's two calls (extensions 8; design in docs/clock.md): reading a merchant's
 * time, and advancing it while every timed process that falls due on the way runs, in order.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { TimedProcess } from '../../jobs/types.js';
import { reportFailure } from '../../jobs/failures.js';
import type { ClockScope } from '../../platform/clock.js';
import { raiseSandboxOffset } from '../../platform/queries/clock.js';
import { ApiError } from '../../platform/errors.js';
import type { IdempotencyContext } from '../../platform/http/request-context.js';
import { Pacer, pacedDb } from '../../db/pacing.js';
import { ensureClockRow, releaseLease, renewLease, takeLease, type Lease } from './queries.js';

/** The largest advance of one call, in seconds (365 days). */
export const advanceSecondsMax = 31_536_000;
/** Distinct due times one advance steps through; past it the clock jumps to the target (logged). */
export const advanceStepsMax = 10_000;
/**
 * How long one advance runs its steps, in milliseconds: it starts no step after this, and the
 * clock jumps to the target (logged), the rest left to the background workers. With the step in
 * progress, the bound on the advance's answer (docs/clock.md).
 */
export const advanceRunMaxMs = 20_000;
/**
 * The longest stretch of an advance's work without a turn of the event loop, in milliseconds:
 * between two of its statements or transactions it lets the other requests of the process run
 * (on the embedded database, their statements take the one connection in between). A statement or
 * transaction of a timed process that starts within a slice is let finish.
 */
export const advanceSliceMs = 5;
/** How long one advance holds its merchant's clock before another process may take it; renewed as it steps. */
export const advanceLeaseMs = 10 * 60_000;
/** How often a stepping advance renews its lease, in milliseconds (a statement at every step was a tenth of a step's).
 * */
export const advanceLeaseRenewMs = 1_000;
/** How long an advance waits for another advance of the same merchant to finish, in milliseconds. */
export const advanceWaitMaxMs = advanceLeaseMs + 30_000;
/** How often a waiting advance looks whether the clock is free, in milliseconds. */
export const advanceWaitPollMs = 100;
/** Seconds a caller refused because another advance holds the clock is told to wait (`retry_after`, `Retry-After`). */
export const advanceRetryAfterSeconds = 30;
/**
 * How long the idempotency key of an advance is held while it runs: the wait for another advance
 * and a long run of timed processes. A retry with the key meanwhile answers 409 `idempotency_in_progress`.
 */
export const advanceClaimLeaseMs = advanceWaitMaxMs + 30 * 60_000;

const sandboxScope = (merchantId: string): ClockScope => ({ merchantId, environment: 'sandbox' });

/** GET /v1/sandbox/clock: the merchant's sandbox time. */
export async function readClock(ctx: ServiceContext, merchantId: string) {
  return { now: (await ctx.clock.now(ctx.db, sandboxScope(merchantId))).toISOString() };
}

// ---------------------------------------------------------------------------------------------
// One advance of a merchant at a time: in this process a chain of promises per merchant, across
// processes a lease on the merchant's clock row (a lease, not a row lock held in a transaction:
// the embedded database has one connection, and the advance runs the processes' own transactions
// while it holds the clock).

const chains = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier advance of the merchant in this process has finished. */
async function serialised<T>(merchantId: string, work: () => Promise<T>): Promise<T> {
  const before = chains.get(merchantId) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => undefined);
  chains.set(merchantId, tail);
  try {
    return await run;
  } finally {
    if (chains.get(merchantId) === tail) chains.delete(merchantId);
  }
}

/** Waits (bounded) until this call holds the merchant's clock; another process's advance may hold it. */
async function acquireLease(ctx: ServiceContext, merchantId: string, idem: IdempotencyContext): Promise<Lease> {
  await ensureClockRow(ctx.db, merchantId);
  const deadline = ctx.clock.real().getTime() + advanceWaitMaxMs;
  for (;;) {
    const lease = await takeLease(ctx.db, merchantId, advanceLeaseMs);
    if (lease) return lease;
    if (ctx.clock.real().getTime() >= deadline) {
      idem.noStore = true; // not a result: the same key may be retried
      // The reference's rate_limited: `retry_after` (seconds) in the body and the Retry-After header.
      throw new ApiError(
        'rate_limited',
        'Another advance of this sandbox clock is still running; retry later.',
        { retry_after: advanceRetryAfterSeconds },
        { 'retry-after': String(advanceRetryAfterSeconds) },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, advanceWaitPollMs));
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * POST /v1/sandbox/clock/advance after its key is claimed: moves the merchant's clock forward by
 * `seconds`, stepping it to each time at which a timed process falls due (earliest first) and
 * running what is due there, so that when it answers every process has run as if that time had
 * passed. Answers the new time.
 */
export async function advanceClock(
  ctx: ServiceContext,
  processes: readonly TimedProcess[],
  merchantId: string,
  seconds: number,
  idem: IdempotencyContext,
  bounds: AdvanceBounds = { runMaxMs: advanceRunMaxMs, sliceMs: advanceSliceMs },
) {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > advanceSecondsMax) {
    throw new ApiError('invalid_request', `seconds must be an integer from 1 to ${advanceSecondsMax}.`);
  }
  return serialised(merchantId, async () => {
    const lease = await acquireLease(ctx, merchantId, idem);
    const scope = sandboxScope(merchantId);
    try {
      const targetOffset = (await ctx.clock.offsetMs(ctx.db, scope)) + BigInt(seconds) * 1000n;
      await runUntil(ctx, processes, scope, targetOffset, lease, bounds);
      await raiseSandboxOffset(ctx.db, merchantId, targetOffset);
      return { now: (await ctx.clock.now(ctx.db, scope)).toISOString() };
    } finally {
      await releaseLease(ctx.db, lease);
    }
  });
}

/** An advance's bounds on its own run (tests shorten them). */
export interface AdvanceBounds {
  /** No step starts after this many milliseconds of the advance's run (`advanceRunMaxMs`). */
  runMaxMs: number;
  /** The event loop turns at least this often, between statements and transactions (`advanceSliceMs`). */
  sliceMs: number;
}

/** The processes that answer a due time, earliest first (list order among equals), up to `until`. */
async function dueProcesses(
  db: Kysely<Database>,
  processes: readonly TimedProcess[],
  scope: ClockScope,
  skipped: ReadonlySet<string>,
  until: number,
  pacer: Pacer,
): Promise<Array<{ process: TimedProcess; due: number }>> {
  const due: Array<{ process: TimedProcess; due: number }> = [];
  for (const process of processes) {
    if (skipped.has(process.name)) continue;
    await pacer.pace();
    const at = await process.nextDue(db, scope);
    if (at !== null && at.getTime() <= until) due.push({ process, due: at.getTime() });
  }
  return due.sort((a, b) => a.due - b.due); // stable: list order among equal times
}

/**
 * The steps of one advance. At each step: the earliest due time of any process (up to the
 * target), the clock raised to it, and every process due by then run in list order. A process
 * that throws, or that is still due at the time it just ran at (it broke the TimedProcess
 * contract), is logged and left out for the rest of this advance; its background worker still
 * takes it up.
 *
 * Paced (db/pacing.ts): the processes get a handle whose transactions start only after the
 * event loop had a turn within the last slice, and the steps' own statements wait for it the same
 * way, so the other requests of the process keep running beside a long advance. No step starts
 * after `runMaxMs`.
 */
async function runUntil(
  ctx: ServiceContext,
  processes: readonly TimedProcess[],
  scope: ClockScope,
  targetOffset: bigint,
  lease: Lease,
  bounds: AdvanceBounds,
): Promise<void> {
  const pacer = new Pacer(bounds.sliceMs);
  const paced: ServiceContext = { ...ctx, db: pacedDb(ctx.db, pacer) };
  // A bound on the advance's own run (real time, not a rule of the service): no clock read.
  const started = performance.now();
  let renewed = started;
  const skipped = new Set<string>();
  const ended = (step: number, why: string) =>
    ctx.log.debug(
      {
        merchant_id: scope.merchantId,
        steps: step,
        ms: Math.round(performance.now() - started),
        longest_slice_ms: Math.round(pacer.longestMs),
      },
      why,
    );
  for (let step = 0; step < advanceStepsMax; step++) {
    if (performance.now() - started >= bounds.runMaxMs) {
      ctx.log.warn(
        { merchant_id: scope.merchantId, steps: step, run_max_ms: bounds.runMaxMs },
        'sandbox clock: an advance reached its time bound; the clock jumps to its target and what is still ' +
          'due is left to the background workers',
      );
      return;
    }
    const target = ctx.clock.real().getTime() + Number(targetOffset);
    const due = await dueProcesses(ctx.db, processes, scope, skipped, target, pacer);
    if (due.length === 0) return ended(step, 'sandbox clock: advance stepped through');
    const stepAt = due[0]!.due;
    await pacer.pace();
    // Real time keeps moving: the offset that makes the merchant's time reach stepAt now, never past the target.
    const needed = BigInt(stepAt - ctx.clock.real().getTime());
    const offset =
      needed > 0n
        ? await raiseSandboxOffset(ctx.db, scope.merchantId, needed < targetOffset ? needed : targetOffset)
        : undefined;
    if (performance.now() - renewed >= advanceLeaseRenewMs) {
      renewed = performance.now();
      if (!(await renewLease(ctx.db, lease, advanceLeaseMs))) {
        // The timed processes are safe to run side by side (their background workers do), so the
        // steps go on; the other advance keeps its lease.
        ctx.log.warn(
          { merchant_id: scope.merchantId },
          'sandbox clock: an advance outlived its lease and another advance took the clock',
        );
      }
    }
    // The merchant's time as ctx.clock.now reads it (real time plus the offset in force), without reading the offset
    // again.
    const now =
      offset === undefined ? await ctx.clock.now(ctx.db, scope) : new Date(ctx.clock.real().getTime() + Number(offset));
    for (const { process } of due.filter((d) => d.due <= now.getTime())) {
      try {
        await pacer.pace();
        await process.runDue(paced, scope, now);
        await pacer.pace();
        const next = await process.nextDue(ctx.db, scope);
        if (next !== null && next.getTime() <= now.getTime()) {
          skipped.add(process.name);
          ctx.log.warn(
            { process: process.name, merchant_id: scope.merchantId, due: next.toISOString(), now: now.toISOString() },
            'sandbox clock: a timed process is still due after it ran; left to its background worker for the ' +
              'rest of this advance',
          );
        }
      } catch (err) {
        skipped.add(process.name);
        reportFailure(
          ctx,
          { job: `sandbox.clock.${process.name}` },
          err,
          'sandbox clock: a timed process failed during an advance; left to its background worker',
        );
      }
    }
  }
  ctx.log.warn(
    { merchant_id: scope.merchantId, steps: advanceStepsMax },
    'sandbox clock: an advance reached its step bound; the clock jumps to its target',
  );
}
