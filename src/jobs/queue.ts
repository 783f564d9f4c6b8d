export {
  claim,
  complete,
  enqueue,
  enqueueMany,
  release,
  renewLease,
  retryLater,
  type ClaimedJob,
  type JobSpec,
} from './queries.js';

/** Exponential backoff with full jitter: base·2^(attempt-1), capped. */
export function backoffMs(attempt: number, baseMs = 1000, maxMs = 10 * 60_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}
