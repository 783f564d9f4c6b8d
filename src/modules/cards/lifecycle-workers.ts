/**
 * The card lifecycle's work on the merchant's clock (docs/cards.md, docs/clock.md): the
 * replacement executor, the reconciliation of closing cards, card expiry and the expiry of
 * authorisation holds (transactions.ts). Each is a timed process
 * (so `POST /v1/sandbox/clock/advance` runs it as the clock passes), the executor also a job
 * queued with each request, and one ticker runs them all on each scope's own clock in production.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { RetryLater, type JobHandler, type Ticker, type TimedProcess } from '../../jobs/types.js';
import { scopeNowSql, type ClockScope } from '../../platform/clock.js';
import type { ServiceContext } from '../../service-context.js';
import { expireCards, nextClosingCheck, nextExpiry, reconcileClosingCards } from './closing/service.js';
import { longestOverdueScopes } from './shared/queries.js';
import { runReplacement } from './replacements/executor.js';
import { replacementJobKind } from './replacements/service.js';
import { expireAuthorizations, nextAuthorizationExpiry } from './transactions/expiry.js';

/** Replacements taken per run (a bound on one batch). */
const executorBatchMax = 100;
const open = ['requested', 'processing'] as const;
const notLeased = sql<boolean>`(lease_until IS NULL OR lease_until < now())`;

function dueReplacements(ctx: Pick<ServiceContext, 'db'>, scope: ClockScope) {
  return ctx.db.selectFrom('card_replacements')
    .where('merchant_id', '=', scope.merchantId).where('environment', '=', scope.environment).where('status', 'in', [...open]).where(notLeased);
}

export const cardLifecycleTimedProcesses: TimedProcess[] = [
  {
    name: 'card.replacement_executor',
    async nextDue(db, scope) {
      const row = await dueReplacements({ db }, scope).select(sql<Date | null>`min(next_run_at)`.as('due')).executeTakeFirst();
      return row?.due ? new Date(row.due) : null;
    },
    async runDue(ctx, scope, now) {
      const due = await dueReplacements(ctx, scope).select('id').where('next_run_at', '<=', now).orderBy('next_run_at').limit(executorBatchMax).execute();
      for (const { id } of due) await runReplacement(ctx, id);
    },
  },
  { name: 'card.closing_reconcile', nextDue: nextClosingCheck, runDue: reconcileClosingCards },
  { name: 'card.expiry', nextDue: nextExpiry, runDue: expireCards },
  // Holds neither cleared nor reversed by their `expires_at` go back (transactions.ts, docs/cards.md "Transactions").
  { name: 'card.authorization_expiry', nextDue: nextAuthorizationExpiry, async runDue(ctx, scope, now) { await expireAuthorizations(ctx, scope, now); } },
];

/** The executor's job, queued with each request: runs it when due, and defers itself while it waits for the issuer. */
const replacementJob: JobHandler = async (job, ctx) => {
  const id = String(job.payload.replacement_id);
  const read = () => ctx.db.selectFrom('card_replacements').selectAll().where('id', '=', id).executeTakeFirst();
  let row = await read();
  if (!row || !(open as readonly string[]).includes(row.status)) return;
  const scope = { merchantId: row.merchant_id, environment: row.environment };
  let now = await ctx.clock.now(ctx.db, scope);
  if (row.next_run_at.getTime() <= now.getTime()) {
    row = (await runReplacement(ctx, id)) ?? (await read());
    if (!row || !(open as readonly string[]).includes(row.status)) return;
    now = await ctx.clock.now(ctx.db, scope);
  }
  throw new RetryLater(Math.max(1000, row.next_run_at.getTime() - now.getTime()), 'the replacement waits for its next run');
};

export const cardLifecycleJobHandlers: Record<string, JobHandler> = { [replacementJobKind]: replacementJob };

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a replacement or a close whose next run is later) could leave due ones out tick
 * after tick. Only what the processes act on: a replacement leased by a run in flight, or an
 * expired card under a replacement in progress, is not due.
 */
export function dueLifecycleScopes(db: Kysely<Database>) {
  const replacementNow = scopeNowSql(sql.ref('card_replacements.merchant_id'), sql.ref('card_replacements.environment'));
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const transactionNow = scopeNowSql(sql.ref('card_transactions.merchant_id'), sql.ref('card_transactions.environment'));
  const cardExpiry = sql<Date>`make_timestamptz(exp_year, exp_month, 1, 0, 0, 0, 'UTC') + interval '1 month'`;
  const due = db.selectFrom('card_replacements').select(['merchant_id', 'environment', sql<Date>`next_run_at - ${replacementNow}`.as('ahead')])
    .where('status', 'in', [...open]).where(notLeased).where(sql<boolean>`next_run_at <= ${replacementNow}`)
    .unionAll(db.selectFrom('cards').select(['merchant_id', 'environment', sql<Date>`close_next_check_at - ${cardNow}`.as('ahead')])
      .where('status', '=', 'closing').where(sql<boolean>`close_next_check_at <= ${cardNow}`))
    .unionAll(db.selectFrom('cards').select(['merchant_id', 'environment', sql<Date>`${cardExpiry} - ${cardNow}`.as('ahead')])
      .where('status', 'in', ['unactivated', 'active']).where(sql<boolean>`${cardExpiry} <= ${cardNow}`)
      // As `card.expiry` (closing.ts): a card under a replacement in progress is ended by the replacement, not expired.
      .where(sql<boolean>`NOT EXISTS (SELECT 1 FROM card_replacements r WHERE r.card_id = cards.id AND r.status = 'processing')`))
    .unionAll(db.selectFrom('card_transactions').select(['merchant_id', 'environment', sql<Date>`expires_at - ${transactionNow}`.as('ahead')])
      .where('type', '=', 'authorization').where('status', '=', 'approved').where(sql<boolean>`expires_at <= ${transactionNow}`));
  return longestOverdueScopes(db, due);
}

/** The processes on each scope's own clock, for the service running on its own. */
export const cardLifecycleTickers: Ticker[] = [{
  name: 'card.lifecycle',
  intervalMs: 60_000,
  async run(ctx) {
    const scopes = await dueLifecycleScopes(ctx.db);
    for (const s of scopes) {
      const scope = { merchantId: s.merchant_id, environment: s.environment };
      const now = await ctx.clock.now(ctx.db, scope);
      for (const p of cardLifecycleTimedProcesses) {
        const due = await p.nextDue(ctx.db, scope);
        if (due && due.getTime() <= now.getTime()) await p.runDue(ctx, scope, now);
      }
    }
  },
}];
