import type { Ticker } from '../jobs/types.js';
import { purgeExpiredBehaviors } from './queries/behaviors.js';

/** Interval of the behaviours purge ticker, in milliseconds. */
export const behaviorPurgeIntervalMs = 5_000;

/** Drops expired sandbox presets (idempotent deletes: safe in several processes). */
export const behaviorPurgeTicker: Ticker = {
  name: 'upstreams.purge_behaviors',
  intervalMs: behaviorPurgeIntervalMs,
  async run(ctx) {
    await purgeExpiredBehaviors(ctx.db);
  },
};

/** Listed in src/background.ts. */
export const upstreamTickers: Ticker[] = [behaviorPurgeTicker];
