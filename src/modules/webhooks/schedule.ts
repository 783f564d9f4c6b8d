/**
 * The retry schedule (pure). After the n-th failed attempt of a round the next one waits
 * `schedule[n-1]`; once the schedule is spent the record is `dead`. A schedule of k delays
 * therefore allows k + 1 attempts per round; a redelivery starts a new round.
 */
export { defaultWebhookRetryScheduleMs, parseRetrySchedule } from '../../platform/config/config-values.js';

/** Attempts in one round, the first included. */
export function attemptsPerRound(schedule: readonly number[]): number {
  return schedule.length + 1;
}

/** Milliseconds to wait after the `roundAttempt`-th (1-based) failed attempt; undefined: no more attempts. */
export function retryDelayAfter(roundAttempt: number, schedule: readonly number[]): number | undefined {
  if (!Number.isInteger(roundAttempt) || roundAttempt < 1)
    throw new RangeError(`roundAttempt must be a positive integer, got ${roundAttempt}`);
  return roundAttempt <= schedule.length ? schedule[roundAttempt - 1] : undefined;
}

/** Offsets from the first attempt at which each attempt of a round starts (ms), ignoring the attempts' own duration. */
export function attemptOffsets(schedule: readonly number[]): number[] {
  const offsets = [0];
  for (const delay of schedule) offsets.push(offsets[offsets.length - 1]! + delay);
  return offsets;
}

/** `5 s, 5 min, 30 min, 2 h` — for documents and messages. */
export function describeDelays(schedule: readonly number[]): string {
  const one = (ms: number) => {
    if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
    if (ms % 60_000 === 0) return `${ms / 60_000} min`;
    if (ms % 1000 === 0) return `${ms / 1000} s`;
    return `${ms} ms`;
  };
  return schedule.map(one).join(', ');
}
