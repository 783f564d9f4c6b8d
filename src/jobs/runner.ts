// Over 300 lines: the job runner's one loop (claims, single and batch runs, leases, failures, drain and stop).
import type { ServiceContext } from '../service-context.js';
import { claim, complete, release, renewLease, retryLater, type ClaimedJob } from './queries.js';
import { reportFailure } from './failures.js';
import { CoalescedRun } from './coalesced-run.js';
import { tracing } from '../platform/telemetry/telemetry.js';
import {
  RetryLater,
  type BatchQueue,
  type BatchWorker,
  type JobBatchHandler,
  type JobHandler,
  type JobHandlers,
} from './types.js';

/** Exponential backoff with full jitter: base·2^(attempt-1), capped. */
export function backoffMs(attempt: number, baseMs = 1000, maxMs = 10 * 60_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

export interface RunnerOptions {
  concurrencyMax?: number;
  pollIntervalMs?: number;
  leaseSeconds?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/**
 * Polls the jobs table and runs handlers, and polls the batch queues it is given (their workers
 * bound their own concurrency). Bounded concurrency; a lease protects each claimed job;
 * stop() stops claiming, gives back what was claimed but not started, and waits for running ones.
 * Every failure, of a handler or of the runner's own database work, is logged and counted
 * (`reportFailure`); none is swallowed.
 */
export class JobRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = new Set<Promise<void>>();
  /** The jobs of the runs in `running` (a batch run has several). */
  private runningJobs = 0;
  private stopped = false;
  /** The polls of the jobs table and the batch queues; a poll asked for while one runs follows it. */
  private readonly polls = new CoalescedRun(
    () => this.pollOnce(),
    () => this.stopped,
  );
  private readonly batchPolls = new CoalescedRun(
    async () => {
      // Batch workers never reject (they report their own failures).
      for (const worker of this.batchWorkers) await worker.poll();
    },
    () => this.stopped,
  );
  private readonly batchWorkers: BatchWorker[];
  private readonly concurrencyMax: number;
  private readonly pollIntervalMs: number;
  private readonly leaseSeconds: number;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly handlers: JobHandlers,
    private readonly options: RunnerOptions = {},
    batchQueues: readonly BatchQueue[] = [],
  ) {
    this.concurrencyMax = options.concurrencyMax ?? 32;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.leaseSeconds = options.leaseSeconds ?? 60;
    // A batch worker's item finished: poll the batch queues now when running by ourselves (tests
    // poll through drain()); the jobs table waits for its tick.
    this.batchWorkers = batchQueues.map((q) =>
      q.create(ctx, () => {
        if (!this.stopped && this.timer) void this.pollBatches();
      }),
    );
  }

  /** Polls the batch queues only; a call while one runs asks for one more after it (never lost). */
  private pollBatches(): Promise<void> {
    return this.batchPolls.run();
  }

  start(): void {
    this.timer = setInterval(() => this.poll(), this.pollIntervalMs);
    this.timer.unref();
  }

  /** Runs one poll now (tests, and right after enqueueing urgent work). */
  poll(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.polls.run();
  }

  private async pollOnce(): Promise<void> {
    await Promise.all([this.pollBatches(), this.pollJobs()]);
  }

  private async pollJobs(): Promise<void> {
    // Jobs, not runs: a batch run holds a slot for each of its jobs.
    const free = this.concurrencyMax - this.runningJobs;
    if (free <= 0) return;
    let jobs: ClaimedJob[];
    try {
      jobs = await claim(this.ctx.db, Object.keys(this.handlers), free, this.leaseSeconds);
    } catch (err) {
      reportFailure(
        this.ctx,
        { job: 'jobs.claim' },
        err,
        'job runner could not claim due jobs; the next poll tries again',
      );
      return;
    }
    if (this.stopped) {
      await release(
        this.ctx.db,
        jobs.map((j) => j.id),
      ).catch((err: unknown) =>
        reportFailure(
          this.ctx,
          { job: 'jobs.release' },
          err,
          `job runner could not give back ${jobs.length} claimed jobs; they are taken again when their lease ends`,
        ),
      );
      return;
    }
    // The jobs of a kind with a batch handler run together, one run for what this poll took of it.
    const together = new Map<string, ClaimedJob[]>();
    const runs: { jobs: ClaimedJob[]; start: () => Promise<void> }[] = [];
    for (const job of jobs) {
      const handler = this.handlers[job.kind]!;
      if (typeof handler === 'function') runs.push({ jobs: [job], start: () => this.execute(job, handler) });
      else if (together.has(job.kind)) together.get(job.kind)!.push(job);
      else {
        const group = [job];
        together.set(job.kind, group);
        runs.push({ jobs: group, start: () => this.runMany(group, handler) });
      }
    }
    this.runningJobs += jobs.length;
    for (const { jobs: held, start } of runs) {
      const run = start().finally(() => {
        this.running.delete(run);
        this.runningJobs -= held.length;
        // A finished job frees a slot: look for more work now rather than at the next tick.
        if (!this.stopped && this.timer) void this.poll();
      });
      this.running.add(run);
    }
  }

  private execute(job: ClaimedJob, handler: JobHandler): Promise<void> {
    const t = tracing();
    if (t === undefined) return this.run(job, handler);
    // With tracing on, a span per run: the handler's statements, upstream calls and the run's
    // log lines are in its trace. The merchant, when the job's payload names one.
    const merchantId = job.payload.merchant_id;
    return t.inSpan(
      `job ${job.kind}`,
      'internal',
      {
        'mwa.job.kind': job.kind,
        'mwa.job.id': job.id.toString(),
        'mwa.job.attempt': job.attempts,
        ...(typeof merchantId === 'string' ? { 'mwa.merchant_id': merchantId } : {}),
      },
      () => this.run(job, handler),
    );
  }

  /**
   * Renews the leases of running jobs (a third of the lease at a time), so that a job running
   * longer than its lease is never claimed by another process meanwhile; it lapses only when this
   * process is gone. Answers the stop of the renewal.
   */
  private renewWhileRunning(jobs: readonly ClaimedJob[]): () => void {
    const renewal = setInterval(
      () => {
        for (const job of jobs)
          renewLease(this.ctx.db, job, this.leaseSeconds).catch((err: unknown) =>
            reportFailure(
              this.ctx,
              { job: job.kind, jobId: job.id, attempt: job.attempts, step: 'lease' },
              err,
              'the lease of a running background job could not be renewed; the next renewal tries again',
            ),
          );
      },
      (this.leaseSeconds * 1000) / 3,
    );
    renewal.unref();
    return () => clearInterval(renewal);
  }

  private async run(job: ClaimedJob, handler: JobHandler): Promise<void> {
    const stopRenewal = this.renewWhileRunning([job]);
    try {
      await handler(job, this.ctx);
      stopRenewal();
      await complete(this.ctx.db, [job]);
      this.ctx.metrics.jobRuns.inc({ job: job.kind, outcome: 'ok' });
    } catch (err) {
      stopRenewal();
      await this.failed(job, err);
    }
  }

  /** Runs jobs of one kind together through its batch handler: the done ones completed in one statement. */
  private async runMany(jobs: readonly ClaimedJob[], handler: JobBatchHandler): Promise<void> {
    const stopRenewal = this.renewWhileRunning(jobs);
    let outcomes: readonly unknown[];
    try {
      outcomes = await handler.many(jobs, this.ctx);
      if (outcomes.length !== jobs.length)
        throw new Error(
          `${jobs[0]!.kind}: a batch handler answered ${outcomes.length} outcomes for ${jobs.length} jobs`,
        );
    } catch (err) {
      outcomes = jobs.map(() => err);
    }
    stopRenewal();
    const done = jobs.filter((_, i) => outcomes[i] === undefined);
    try {
      await complete(this.ctx.db, done);
      for (const job of done) this.ctx.metrics.jobRuns.inc({ job: job.kind, outcome: 'ok' });
    } catch (err) {
      reportFailure(
        this.ctx,
        { job: jobs[0]!.kind, step: 'record' },
        err,
        `${done.length} finished background jobs could not be completed; they run again when their lease ends`,
      );
    }
    for (const [i, job] of jobs.entries()) if (outcomes[i] !== undefined) await this.failed(job, outcomes[i]);
  }

  /** Backs the job off (or parks it `dead` once its attempts are spent), then logs and counts the run. */
  private async failed(job: ClaimedJob, err: unknown): Promise<void> {
    const later = err instanceof RetryLater;
    const uncounted = later && !err.countsAsAttempt;
    const delay = later ? err.delayMs : backoffMs(job.attempts, this.options.backoffBaseMs, this.options.backoffMaxMs);
    const where = { job: job.kind, jobId: job.id, attempt: job.attempts, attemptsMax: job.max_attempts };
    const message = err instanceof Error ? err.message : String(err);
    const lastAttempt = !uncounted && job.attempts >= job.max_attempts;
    // Parked only when this claim wrote it, and the alert in the same transaction (money may be
    // waiting on the job: a payout applied, a freeze released; the operator must know): raised
    // once, by the run that parked the job, and never lost between the two writes.
    let dead = false;
    try {
      dead = await this.ctx.db.transaction().execute(async (trx) => {
        const parked = (await retryLater(trx, job, delay, message, uncounted)) && lastAttempt;
        if (parked) {
          await this.ctx.alertOperator(
            {
              kind: 'job.dead',
              object: 'job',
              objectId: job.id.toString(),
              message:
                `Background job ${job.kind} failed ${job.attempts} times and is parked as dead; last ` +
                `error: ${message.slice(0, 500)}`,
            },
            trx,
          );
        }
        return parked;
      });
    } catch (recordErr) {
      reportFailure(
        this.ctx,
        { ...where, step: 'record' },
        recordErr,
        'the outcome of a background job could not be recorded; it runs again when its lease ends',
      );
    }
    this.ctx.metrics.jobRuns.inc({ job: job.kind, outcome: dead ? 'dead' : later ? 'later' : 'error' });
    if (dead) {
      reportFailure(
        this.ctx,
        where,
        err,
        `background job failed on its last attempt (${job.attempts} of ${job.max_attempts}); parked as dead`,
      );
    } else if (later) {
      // Not a failure: the handler asked to be run again later (e.g. no answer from the provider yet).
      this.ctx.log.debug(
        { job: job.kind, job_id: job.id.toString(), attempt: job.attempts, delay_ms: delay, reason: err.message },
        'background job deferred',
      );
    } else {
      reportFailure(
        this.ctx,
        where,
        err,
        `background job failed; attempt ${job.attempts} of ${job.max_attempts}, next in ${delay} ms`,
      );
    }
  }

  private idle(): boolean {
    return this.running.size === 0 && this.batchWorkers.every((w) => w.inFlight() === 0);
  }

  /** Waits until no job or batch item is running and nothing due is left (tests). Bounded by timeoutMs. */
  async drain(timeoutMs = 10_000): Promise<void> {
    // A bound on the wait itself (real time, not a rule of the service): a timer, no clock read.
    let timedOut = false;
    const bound = setTimeout(() => {
      timedOut = true;
    }, timeoutMs);
    try {
      while (!timedOut) {
        // A turn of the event loop each round: a batch queue's `settled()` may answer at once, and a
        // loop of promises alone would starve what a job waits for in a later turn (a keyed read's
        // statement, a timer), and this bound.
        await new Promise((r) => setImmediate(r));
        await this.poll();
        if (this.idle()) {
          await this.poll();
          if (this.idle()) return;
        }
        await Promise.race([
          ...this.running,
          ...this.batchWorkers.map((w) => w.settled()),
          new Promise((r) => setTimeout(r, 20)),
        ]);
      }
    } finally {
      clearTimeout(bound);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.polls.running;
    await this.batchPolls.running;
    await Promise.allSettled([...this.running, ...this.batchWorkers.map((w) => w.stop())]);
  }
}
