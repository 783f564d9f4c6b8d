/**
 * The safety net behind the lock order (docs/locking.md): PostgreSQL ends a transaction caught in
 * a deadlock (SQLSTATE 40P01) or, under a stricter isolation level, a serialization failure
 * (40001), and rolls it back whole. A caller that runs the WHOLE transaction again from its first
 * statement (the idempotency key's lock and record included) can therefore try again: nothing of
 * the failed attempt was written. Only such callers use this; a unit of work that commits in
 * several transactions, or calls out between them, must not be wrapped as a whole.
 */

/** SQLSTATEs after which PostgreSQL has rolled the whole transaction back. */
const conflictStates = new Set(['40P01', '40001']);

/** Attempts of one transaction at most, the first included. */
export const conflictAttemptsMax = 3;
/** Backoff before the second attempt; doubled for each further one, with ±50 % jitter. */
export const conflictBackoffMs = 20;

/** The SQLSTATE of a deadlock or serialization failure, or undefined for any other error. */
export function conflictStateOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && conflictStates.has(code) ? code : undefined;
}

export interface ConflictRetryOptions {
  /** Called before each further attempt (a log line: a retried deadlock stays visible). */
  onRetry?: (info: { sqlState: string; attempt: number; delayMs: number }) => void;
  /** Called before each attempt (restores request state the failed attempt changed). */
  beforeAttempt?: () => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The delay before attempt `attempt + 1` (attempt ≥ 1): 20, 40 ms … ±50 %. */
export function conflictDelayMs(attempt: number, random: () => number = Math.random): number {
  return Math.round(conflictBackoffMs * 2 ** (attempt - 1) * (0.5 + random()));
}

/**
 * Runs `transaction` (which must open, run and commit one whole transaction) up to
 * `conflictAttemptsMax` times while it fails with a deadlock or a serialization failure; any
 * other error, or the last attempt's, is thrown as it is.
 */
export async function withConflictRetry<T>(
  transaction: () => Promise<T>,
  options: ConflictRetryOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    options.beforeAttempt?.();
    try {
      return await transaction();
    } catch (err) {
      const sqlState = conflictStateOf(err);
      if (sqlState === undefined || attempt >= conflictAttemptsMax) throw err;
      const delayMs = conflictDelayMs(attempt, options.random);
      options.onRetry?.({ sqlState, attempt, delayMs });
      await (options.sleep ?? pause)(delayMs);
    }
  }
}
