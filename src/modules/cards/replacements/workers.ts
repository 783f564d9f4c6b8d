import { sql } from 'kysely';
import { RetryLater, type JobHandler, type TimedProcess } from '../../../jobs/types.js';
import type { ClockScope } from '../../../platform/clock.js';
import type { ServiceContext } from '../../../service-context.js';
import { runReplacement } from './executor.js';

/** Replacements taken per run (a bound on one batch). */
const executorBatchMax = 100;
export const openReplacementStatuses = ['requested', 'processing'] as const;
export const notLeased = sql<boolean>`(lease_until IS NULL OR lease_until < now())`;

function dueReplacements(ctx: Pick<ServiceContext, 'db'>, scope: ClockScope) {
  return ctx.db
    .selectFrom('card_replacements')
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .where('status', 'in', [...openReplacementStatuses])
    .where(notLeased);
}

/** The replacement executor on the merchant's clock. */
export const replacementExecutorProcess: TimedProcess = {
  name: 'card.replacement_executor',
  async nextDue(db, scope) {
    const row = await dueReplacements({ db }, scope)
      .select(sql<Date | null>`min(next_run_at)`.as('due'))
      .executeTakeFirst();
    return row?.due ? new Date(row.due) : null;
  },
  async runDue(ctx, scope, now) {
    const due = await dueReplacements(ctx, scope)
      .select('id')
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(executorBatchMax)
      .execute();
    for (const { id } of due) await runReplacement(ctx, id);
  },
};

/** The executor's job, queued with each request: runs it when due, and defers itself while it waits for the issuer. */
export const replacementJob: JobHandler = async (job, ctx) => {
  const id = String(job.payload.replacement_id);
  const read = () => ctx.db.selectFrom('card_replacements').selectAll().where('id', '=', id).executeTakeFirst();
  let row = await read();
  if (!row || !(openReplacementStatuses as readonly string[]).includes(row.status)) return;
  const scope = { merchantId: row.merchant_id, environment: row.environment };
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
