import type { Ticker } from '../jobs/registry.js';
import { purgeExpiredBehaviors } from './behaviors.js';

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

/** What the tickers list adds for the upstreams. */
export const upstreamTickers: Ticker[] = [behaviorPurgeTicker];
