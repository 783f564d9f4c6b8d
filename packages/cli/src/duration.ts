/**
 * Durations as people type them: `90s`, `3d`, `1h30m`, `2d12h`, or a bare number of seconds.
 * Units d, h, m, s, each at most once and largest first; the total is a whole number of seconds.
 */

const UNIT_SECONDS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
type Unit = keyof typeof UNIT_SECONDS;
const ORDER: Unit[] = ['d', 'h', 'm', 's'];

export class DurationError extends Error {
  override name = 'DurationError';
}

/**
 * Seconds in `text`; throws `DurationError` for anything else (an empty string, `1x`, `30m1h`, `1.5h`, `-5s`, `0s`).
 */
export function parseDuration(text: string): number {
  const input = String(text).trim().toLowerCase();
  if (/^\d+$/.test(input)) return checked(Number(input), text);
  const part = /(\d+)([dhms])/gy;
  let total = 0;
  let last = -1;
  let matched = 0;
  for (let m = part.exec(input); m !== null; m = part.exec(input)) {
    const unit = m[2] as Unit;
    const rank = ORDER.indexOf(unit);
    if (rank <= last)
      throw new DurationError(`invalid duration "${text}": units go largest first, each once (e.g. 1h30m)`);
    last = rank;
    total += Number(m[1]) * UNIT_SECONDS[unit];
    matched = part.lastIndex;
  }
  if (input === '' || matched !== input.length) {
    throw new DurationError(`invalid duration "${text}": use whole numbers with d, h, m, s (e.g. 90s, 3d, 1h30m)`);
  }
  return checked(total, text);
}

function checked(seconds: number, text: string): number {
  if (!Number.isSafeInteger(seconds)) throw new DurationError(`invalid duration "${text}": too long`);
  if (seconds <= 0) throw new DurationError(`invalid duration "${text}": must be at least 1s`);
  return seconds;
}

/** `93784` → `1d2h3m4s` (the inverse of parseDuration for display). */
export function formatDuration(seconds: number): string {
  let rest = Math.floor(seconds);
  if (rest <= 0) return '0s';
  let out = '';
  for (const unit of ORDER) {
    const n = Math.floor(rest / UNIT_SECONDS[unit]);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * UNIT_SECONDS[unit];
  }
  return out;
}
