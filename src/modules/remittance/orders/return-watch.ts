/**
 * The return watch (docs/remittance.md, "Returns"): a completed payout can still come back from
 * the beneficiary's bank (an account closed, a name refused, a recall) days after the provider
 * paid it out. The provider tells us only when asked, so each completed order is asked about
 * again on a schedule counted from its completion (`returnCheckOffsetsSeconds`, state.ts), on its
 * merchant's clock; a provider that answers `refunded` returns the order (the amount back to
 * available, the fee kept: `returnIn`, the same move as the sandbox helper's). After the last
 * check the order is no longer watched. A question that gets no answer counts as asked: the next
 * one is due on the schedule as usual.
 */
import type { ServiceContext } from '../../../service-context.js';
import type { Ticker, TimedProcess } from '../../../jobs/types.js';
import type { ClockScope } from '../../../platform/clock.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { reportFailure } from '../../../jobs/failures.js';
import { returnIn } from './apply.js';
import { claimReturnCheck, dueReturnChecks, nextReturnCheck, recordReturnCheck, returnCheckDueSql } from './queries.js';
import { decideOnReturnCheck, nextReturnCheckOffset } from './state.js';
import type { RemitOrderRow } from './tables.js';
import { rowScope } from '../../../db/owned-by.js';

/** Orders asked about per run (a bound on one batch). */
const batchMax = 50;
/** A claimed order's next check is pushed out by this much while it is asked (so two runs never ask at once). */
const claimLeaseSeconds = 600;

/**
 * Finds the due orders (one scope's, or every merchant's on each one's own clock) and asks about
 * each, claiming each one when its turn comes (as the reconcile pass does): a batch claimed at
 * once outlived its lease behind slow provider answers, and one order's failure left the rest of
 * the batch claimed and unasked for the lease. Answers how many were due.
 */
async function watch(ctx: ServiceContext, scope?: ClockScope, now?: Date): Promise<number> {
  const due = returnCheckDueSql(scope, now);
  const rows = await dueReturnChecks(ctx.db, due, batchMax);
  for (const { id } of rows) {
    const claimed = await claimReturnCheck(ctx.db, id, due, claimLeaseSeconds);
    if (!claimed) continue; // another run took it meanwhile
    try {
      await askAboutReturn(ctx, claimed);
    } catch (err) {
      reportFailure(
        ctx,
        { job: 'remittance.return_watch' },
        err,
        'the return check of a completed remittance failed; it is asked again when its claim ends',
      );
    }
  }
  return rows.length;
}

async function askAboutReturn(ctx: ServiceContext, order: RemitOrderRow): Promise<void> {
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.status(rowScope(order), order.id),
  );
  const decision = decideOnReturnCheck(order.status, answer);
  await ctx.db.transaction().execute(async (trx) => {
    if (decision.kind === 'return') {
      await returnIn(trx, order.id, decision);
      return;
    }
    const checks = order.return_checks + 1;
    const offset = nextReturnCheckOffset(checks);
    await recordReturnCheck(trx, order.id, checks, offset);
  });
}

/** A timed process, so that an advance of a sandbox merchant's clock asks about its orders as their checks fall due. */
export const returnWatchProcess: TimedProcess = {
  name: 'remittance.return_watch',
  nextDue: (db, scope) => nextReturnCheck(db, scope),
  async runDue(ctx, scope, now) {
    while ((await watch(ctx, scope, now)) === batchMax);
  },
};

/** The same for every merchant, on each one's own clock, for the service running on its own. */
export const returnWatchTicker: Ticker = {
  name: 'remittance.return_watch',
  intervalMs: 60_000,
  async run(ctx) {
    await watch(ctx);
  },
};
