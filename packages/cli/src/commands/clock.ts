/** `mwa clock` and `mwa clock advance <duration>`: the merchant's sandbox clock (extensions section 8). */
import type { CommandSpec } from '../command.js';
import { DurationError, formatDuration, parseDuration } from '../duration.js';
import { UsageError } from '../io.js';

/** The server's bound for one advance (extensions section 8). */
export const MAX_ADVANCE_SECONDS = 31_536_000;

export const clockShow: CommandSpec = {
  name: 'clock',
  summary: 'Show the sandbox clock (GET /v1/sandbox/clock)',
  usage: 'clock',
  details:
    'Each sandbox merchant has its own clock, which only moves forward: mwa clock advance <duration> (see ' +
    'mwa clock advance --help).',
  run: async (ctx) => {
    const clock = await ctx.client().sandbox.clock();
    ctx.result(clock, clock.now);
  },
};

export const clockAdvance: CommandSpec = {
  name: 'clock advance',
  summary: 'Move the sandbox clock forward (POST /v1/sandbox/clock/advance)',
  usage: 'clock advance <duration>',
  details: [
    'Durations: whole numbers with d, h, m, s, largest first, or a number of seconds: 90s, 3d, 1h30m, 2d12h, 3600.',
    'At most 365d (31536000 s) per call. Answers once every timed process due before the new time has run',
    '(quote and ticket expiry, earn accrual and maturity, webhook retries, ...).',
    '',
    'Example: mwa clock advance 1d',
  ].join('\n'),
  positionals: { min: 1, max: 1, names: '<duration>' },
  run: async (ctx) => {
    let seconds: number;
    try {
      seconds = parseDuration(ctx.positionals[0]!);
    } catch (err) {
      if (err instanceof DurationError) throw new UsageError(err.message, 'clock advance');
      throw err;
    }
    if (seconds > MAX_ADVANCE_SECONDS)
      throw new UsageError(
        `at most 365d (${MAX_ADVANCE_SECONDS} s) per advance; ${formatDuration(seconds)} is more`,
        'clock advance',
      );
    const clock = await ctx.client().sandbox.advanceClock(seconds);
    ctx.result({ ...clock, advanced_seconds: seconds }, `${clock.now} (advanced ${formatDuration(seconds)})`);
  },
};
