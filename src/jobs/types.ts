import type { ServiceContext } from '../service-context.js';
import type { ClaimedJob } from './queue.js';

/** Runs one claimed job of its kind; throw to fail the attempt, `RetryLater` to try again without it counting. */
export type JobHandler = (job: ClaimedJob, ctx: ServiceContext) => Promise<void>;

/** A handler asks for a later attempt without it counting as an error (e.g. the upstream has no answer yet). */
export class RetryLater extends Error {
  constructor(readonly delayMs: number, message = 'retry later') {
    super(message);
  }
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
