import type { ServiceContext } from '../service-context.js';

/** What a background failure is logged with. */
export interface BackgroundFailure {
  /** Job kind or ticker name; the runner's own steps are `jobs.claim` and `jobs.release`. */
  job: string;
  jobId?: bigint;
  /** A job's attempt (1-based); a ticker's failed runs in a row. */
  attempt?: number;
  attemptsMax?: number;
  /** Which step failed when it is not the handler: `record` (writing the job's outcome). */
  step?: string;
}

/** A thrown value as an Error, so the log carries a message and a stack. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Logs a background failure at `error` with its job, job id, attempt and error (message and stack
 * go to the log, never to a response) and counts it in `background_failures_total{job}`.
 */
export function reportFailure(
  ctx: Pick<ServiceContext, 'log' | 'metrics'>,
  failure: BackgroundFailure,
  err: unknown,
  message: string,
): void {
  ctx.metrics.backgroundFailures.inc({ job: failure.job });
  ctx.log.error(
    {
      job: failure.job,
      ...(failure.jobId !== undefined ? { job_id: failure.jobId.toString() } : {}),
      ...(failure.attempt !== undefined ? { attempt: failure.attempt } : {}),
      ...(failure.attemptsMax !== undefined ? { attempts_max: failure.attemptsMax } : {}),
      ...(failure.step !== undefined ? { step: failure.step } : {}),
      err: asError(err),
    },
    message,
  );
}
