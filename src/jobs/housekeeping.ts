import type { Ticker } from './types.js';
import { purgeExpiredNonces } from '../platform/writes/nonces.js';
import { purgeExpiredKeys } from '../platform/writes/idempotency.js';
import { purgeOldWindows } from '../platform/auth/rate-limit.js';
import { purgeExpiredTokens } from '../platform/auth/auth.js';

/** Drops the platform's expired rows: nonces, idempotency keys, rate windows, access tokens. */
export const housekeepingTicker: Ticker = {
  name: 'housekeeping',
  intervalMs: 60_000,
  async run(ctx) {
    // The request-security windows' own time (real time; tests move it).
    const nowMs = ctx.requestClock();
    await purgeExpiredNonces(ctx.db, nowMs);
    await purgeExpiredKeys(ctx.db);
    await purgeOldWindows(ctx.db, nowMs);
    await purgeExpiredTokens(ctx.db);
  },
};
