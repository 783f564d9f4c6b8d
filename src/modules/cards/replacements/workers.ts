import { RetryLater, type JobHandler, type TimedProcess } from '../../../jobs/types.js';
import { runReplacement } from './executor.js';
import { dueReplacementIds, nextReplacementRun, openReplacementStatuses, replacementById } from './queries.js';
import { rowScope } from '../../../db/owned-by.js';

/** Replacements taken per run (a bound on one batch). */
const executorBatchMax = 100;

/** The replacement executor on the merchant's clock. */
export const replacementExecutorProcess: TimedProcess = {
  name: 'card.replacement_executor',
  nextDue: nextReplacementRun,
  async runDue(ctx, scope, now) {
    const due = await dueReplacementIds(ctx.db, scope, now, executorBatchMax);
    for (const { id } of due) await runReplacement(ctx, id);
  },
};

/** The executor's job, queued with each request: runs it when due, and defers itself while it waits for the issuer. */
export const replacementJob: JobHandler = async (job, ctx) => {
  const id = String(job.payload.replacement_id);
  const read = () => replacementById(ctx.db, id);
  let row = await read();
  if (!row || !(openReplacementStatuses as readonly string[]).includes(row.status)) return;
  const scope = rowScope(row);
  let now = await ctx.clock.now(ctx.db, scope);
  if (row.next_run_at.getTime() <= now.getTime()) {
    row = (await runReplacement(ctx, id)) ?? (await read());
    if (!row || !(openReplacementStatuses as readonly string[]).includes(row.status)) return;
    now = await ctx.clock.now(ctx.db, scope);
  }
  throw new RetryLater(
    Math.max(1000, row.next_run_at.getTime() - now.getTime()),
    'the replacement waits for its next run',
  );
};
