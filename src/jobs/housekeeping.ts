import type { Ticker } from './types.js';
import { purgeExpiredNonces } from '../platform/nonces.js';
import { purgeExpiredKeys } from '../platform/idempotency.js';
import { purgeOldWindows } from '../platform/rate-limit.js';
import { purgeExpiredTokens } from '../platform/auth.js';

/** Drops the platform's expired rows: nonces, idempotency keys, rate windows, access tokens. */
export const housekeepingTicker: Ticker = {
  name: 'housekeeping',
  intervalMs: 60_000,
  async run(ctx) {
    await purgeExpiredNonces(ctx.db);
    await purgeExpiredKeys(ctx.db);
    await purgeOldWindows(ctx.db);
    await purgeExpiredTokens(ctx.db);
  },
};
