import type { ClockScope } from '../../platform/clock.js';
import type { ServiceContext } from '../../service-context.js';
import type { Ticker, TimedProcess } from '../../jobs/types.js';
import {
  advancedSandboxMerchants,
  oldestPrunableEvent,
  pruneOlderThan,
  pruneSandboxOlderThan,
  pruneScopeBatch,
} from './queries.js';

/**
 * Retention (extensions 11, docs/events.md): an event is kept `EVENT_RETENTION_DAYS` on its
 * merchant's clock, then pruned with its delivery records (their attempts go with them, ON
 * DELETE CASCADE). Never an event a delivery still needs: one not yet fanned out, or with a
 * record `pending` or `failed` (retries to come) is kept until its records end `sent`, `dead` or
 * `no_subscriber`. A timed process (a sandbox merchant's advance runs it as its clock passes
 * the due time) and a ticker (production, and every merchant's own time) with the same claim.
 */

const day = 86_400_000;
/** Events pruned per statement; a run repeats while a batch comes back full. */
export const pruneBatchMax = 1_000;
/** Batches per ticker run and scope, so that one run stays short. */
const batchesPerRun = 20;

const retentionMs = (ctx: { config: { eventRetentionDays: number } }) => ctx.config.eventRetentionDays * day;

/** The scope's prunable events created at or before `now - retention` (`now`: the scope's time). */
export async function pruneScope(
  ctx: ServiceContext,
  scope: ClockScope,
  now: Date,
  batches = Number.POSITIVE_INFINITY,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs(ctx));
  let pruned = 0;
  for (let i = 0; i < batches; i++) {
    // To the millisecond, as `nextDue` reads `created_at` (a Date): an event at 12.3456 s is due at
    // 12.345 s + the retention, and must go when the advance stops there.
    const n = await pruneScopeBatch(ctx.db, scope, cutoff, pruneBatchMax);
    pruned += n;
    if (n < pruneBatchMax) break;
  }
  return pruned;
}

export const eventRetentionProcess: TimedProcess = {
  name: 'events.retention',
  async nextDue(db, scope) {
    const row = await oldestPrunableEvent(db, scope);
    // The process has no context here: the retention is read when it runs; the due time uses the
    // configured days through `retentionDaysForDue`, set by the routes at start-up.
    // Rounded up to the next whole day (UTC): the events of one day go in one step of a sandbox
    // advance, not one step each (a year's advance otherwise doubled its steps). Kept "at least"
    // the retention, as extensions 11 says: at most a day longer.
    return row?.at
      ? new Date(Math.ceil((new Date(row.at as unknown as string).getTime() + retentionDaysForDue * day) / day) * day)
      : null;
  },
  async runDue(ctx, scope, now) {
    await pruneScope(ctx, scope, now);
  },
};

/**
 * The retention in days the timed process's `nextDue` answers with (it is given the database
 * only): the configuration's, recorded by `useRetention` when the service starts.
 */
let retentionDaysForDue = 30;
export function useRetention(days: number): void {
  retentionDaysForDue = days;
}

/**
 * The ticker: everything older than real time minus the retention (every merchant's time is at
 * least real time: sandbox offsets only grow), then each sandbox merchant whose clock was
 * advanced, on its own time.
 */
export const eventRetentionTicker: Ticker = {
  name: 'events.retention',
  intervalMs: 60_000,
  async run(ctx) {
    for (let i = 0; i < batchesPerRun; i++) {
      if ((await pruneOlderThan(ctx.db, retentionMs(ctx), pruneBatchMax)) < pruneBatchMax) break;
    }
    const advanced = await advancedSandboxMerchants(ctx.db);
    for (const { merchant_id } of advanced) {
      for (let i = 0; i < batchesPerRun; i++) {
        if ((await pruneSandboxOlderThan(ctx.db, merchant_id, retentionMs(ctx), pruneBatchMax)) < pruneBatchMax) break;
      }
    }
  },
};
