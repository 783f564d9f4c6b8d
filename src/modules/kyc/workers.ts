import type { JobHandler } from '../../jobs/types.js';
import { RetryLater } from '../../jobs/types.js';
import { kycCheckJobKind, runCheck } from './check.js';

/** First poll of a pending check after this long; the delay doubles up to the max. */
export const kycCheckPollDelayMs = 60_000;
export const kycCheckPollDelayMsMax = 3_600_000;

/**
 * `kyc.check`: sends a submission to the KYC provider and polls its verdict until it is decided
 * (applied through the review path), stale (a newer submission or a decision was made), or the
 * job's attempts are spent (the profile stays in the operator's queue).
 */
export const kycCheckJob: JobHandler = async (job, ctx) => {
  const profileId = String(job.payload.profile_id ?? '');
  const submission = Number(job.payload.submission);
  const result = await runCheck(ctx, profileId, submission);
  if (result === 'pending' || result === 'no_answer' || result === 'timed_out') {
    throw new RetryLater(
      Math.min(kycCheckPollDelayMs * 2 ** Math.min(job.attempts - 1, 10), kycCheckPollDelayMsMax),
      `kyc check ${result}`,
    );
  }
};

/** Listed in src/background.ts. */
export const kycJobHandlers: Record<string, JobHandler> = { [kycCheckJobKind]: kycCheckJob };
