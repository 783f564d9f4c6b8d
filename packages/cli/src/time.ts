/** `--since` and `--until`: an ISO 8601 time, or a duration meaning that long ago on the merchant's clock. */
import { MerchantWalletNotFoundError } from '@merchant-wallet/sdk';
import type { Context } from './context.js';
import { DurationError, parseDuration } from './duration.js';
import { UsageError } from './io.js';

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `2026-12-01T00:00:00Z` as given (normalised to ISO 8601), or `2h` / `3d`: that long before now,
 * where now is the sandbox clock (events carry the merchant's clock time) or, in production, this
 * machine's time.
 */
export async function parseTime(ctx: Context, text: string, option: string, command: string): Promise<string> {
  if (ISO.test(text)) {
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw new UsageError(`${option}: "${text}" is not a valid time`, command);
    return new Date(ms).toISOString();
  }
  let seconds: number;
  try {
    seconds = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError)
      throw new UsageError(`${option}: "${text}" is neither an ISO 8601 time nor a duration such as 2h or 3d`, command);
    throw err;
  }
  return new Date((await merchantNow(ctx)) - seconds * 1000).toISOString();
}

async function merchantNow(ctx: Context): Promise<number> {
  try {
    return Date.parse((await ctx.client().sandbox.clock()).now);
  } catch (err) {
    if (err instanceof MerchantWalletNotFoundError) return Date.now();
    throw err;
  }
}
