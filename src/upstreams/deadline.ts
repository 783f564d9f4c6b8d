import type { NoAnswer } from './port.js';
/**
 * Runs one upstream call under a deadline. No answer in time is `timeout` (the outcome is
 * unknown; a late answer is dropped and reconciliation learns the truth by status query); a call
 * that throws has told us nothing either: `unknown`. Adapters never make the caller wait longer.
 */
export async function withDeadline<T>(deadlineMs: number, call: () => Promise<T>): Promise<T | NoAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<{ kind: 'timeout' }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), deadlineMs);
    timer.unref();
  });
  try {
    return await Promise.race([call(), deadline]);
  } catch (err) {
    return { kind: 'unknown', reason: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
