/**
 * The card area's background work as the composition root (src/background.ts) lists it: job
 * handlers, timed processes and the tickers that run them in production. Here and not in the
 * sub-areas because each ticker runs the timed processes of several sub-areas on each scope's own
 * clock, over one query of the scopes with work due in any of them (the role of `workers.ts`, at
 * the area's level; each process lives in its sub-area's workers.ts or reconcile.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { JobHandler, Ticker, TimedProcess } from '../../../jobs/types.js';
import { scopeNowSql } from '../../../platform/clock.js';
import { applicationReconcileProcess } from '../applications/reconcile.js';
import { voidIssuedCard, voidIssuedCardJobKind } from '../applications/void-issued.js';
import { supplementExpiryProcess } from '../applications/workers.js';
import { activationUnlockProcess } from '../cards/workers.js';
import { cardExpiryProcess, closingReconcileProcess } from '../closing/workers.js';
import { rulesReconcileProcess } from '../controls/reconcile.js';
import { limitsPushJobKind, pushLimits } from '../controls/service.js';
import { replacementJobKind } from '../replacements/service.js';
import {
  notLeased,
  openReplacementStatuses,
  replacementExecutorProcess,
  replacementJob,
} from '../replacements/workers.js';
import { authorizationExpiryProcess } from '../transactions/workers.js';
import { longestOverdueScopes } from './queries.js';

// ---------------------------------------------------------------------------------------------
// Supplements and activation locks

/**
 * Work due on a merchant's clock (docs/clock.md): supplement work orders that expire (application
 * `failed`, fee refunded, no card) and activation locks that end. `POST /v1/sandbox/clock/advance`
 * runs them as the clock passes; the housekeeping of production runs them on real time the same way.
 */
export const cardTimedProcesses: TimedProcess[] = [supplementExpiryProcess, activationUnlockProcess];

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a pending supplement, a lock not yet over) could leave due ones out tick after tick.
 */
export function dueTimedScopes(db: Kysely<Database>) {
  const applicationNow = scopeNowSql(
    sql.ref('card_applications.merchant_id'),
    sql.ref('card_applications.environment'),
  );
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const due = db
    .selectFrom('card_applications')
    .select(['merchant_id', 'environment', sql<Date>`supplement_expires_at - ${applicationNow}`.as('ahead')])
    .where('status', '=', 'need_docs')
    .where('supplement_status', '=', 'pending')
    .where(sql<boolean>`supplement_expires_at <= ${applicationNow}`)
    .unionAll(
      db
        .selectFrom('cards')
        .select(['merchant_id', 'environment', sql<Date>`locked_until - ${cardNow}`.as('ahead')])
        .where('locked_until', 'is not', null)
        .where(sql<boolean>`locked_until <= ${cardNow}`),
    );
  return longestOverdueScopes(db, due);
}

/** The same processes on each scope's own clock, for the service running on its own (not only on a sandbox advance). */
export const cardTickers: Ticker[] = [
  {
    name: 'card.timed',
    intervalMs: 60_000,
    async run(ctx) {
      const scopes = await dueTimedScopes(ctx.db);
      for (const s of scopes) {
        const scope = { merchantId: s.merchant_id, environment: s.environment };
        const now = await ctx.clock.now(ctx.db, scope);
        for (const p of cardTimedProcesses) {
          const due = await p.nextDue(ctx.db, scope);
          if (due && due.getTime() <= now.getTime()) await p.runDue(ctx, scope, now);
        }
      }
    },
  },
];

/** Queue handlers: the push of recorded limits to the issuer; the cancellation of a card issued for a failed
 * application. */
export const cardJobHandlers: Record<string, JobHandler> = {
  [limitsPushJobKind]: pushLimits,
  [voidIssuedCardJobKind]: voidIssuedCard,
};

// ---------------------------------------------------------------------------------------------
// Reconciliation of unknown outcomes (applications/reconcile.ts, controls/reconcile.ts)

/** The card area's reconciliation processes (src/background.ts lists them among the timed processes). */
export const cardReconcileTimedProcesses: TimedProcess[] = [applicationReconcileProcess, rulesReconcileProcess];

/**
 * The scopes with a check due on their own clock, the longest overdue first (a bound on them per
 * tick): a bound over every scope with something open (a check not yet due, a rule set still in
 * its claim's lease) could leave due ones out tick after tick, and so could a bound over due ones
 * in no particular order while more than the bound stay due.
 */
export function dueReconcileScopes(db: Kysely<Database>) {
  const applicationNow = scopeNowSql(
    sql.ref('card_applications.merchant_id'),
    sql.ref('card_applications.environment'),
  );
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const applications = db
    .selectFrom('card_applications')
    .select(['merchant_id', 'environment', sql<Date>`next_check_at - ${applicationNow}`.as('ahead')])
    .where('status', '=', 'pending')
    .where('upstream_outcome', '<>', 'accepted')
    .where('next_check_at', 'is not', null)
    .where(sql<boolean>`next_check_at <= ${applicationNow}`);
  const ruleSets = db
    .selectFrom('card_merchant_rules')
    .innerJoin('cards', 'cards.id', 'card_merchant_rules.card_id')
    .select([
      'cards.merchant_id',
      'cards.environment',
      sql<Date>`card_merchant_rules.next_check_at - ${cardNow}`.as('ahead'),
    ])
    .where('card_merchant_rules.synced', '=', false)
    .where('card_merchant_rules.next_check_at', 'is not', null)
    .where(sql<boolean>`card_merchant_rules.next_check_at <= ${cardNow}`);
  return longestOverdueScopes(db, applications.unionAll(ruleSets));
}

/**
 * The same processes on each scope's own clock, for the service running on its own (not only on a
 * sandbox advance): every scope with a check due.
 */
export const cardReconcileTickers: Ticker[] = [
  {
    name: 'card.reconcile',
    intervalMs: 5_000,
    async run(ctx) {
      const scopes = await dueReconcileScopes(ctx.db);
      for (const s of scopes) {
        const scope = { merchantId: s.merchant_id, environment: s.environment };
        const now = await ctx.clock.now(ctx.db, scope);
        for (const p of cardReconcileTimedProcesses) {
          const due = await p.nextDue(ctx.db, scope);
          if (due && due.getTime() <= now.getTime()) await p.runDue(ctx, scope, now);
        }
      }
    },
  },
];

// ---------------------------------------------------------------------------------------------
// The lifecycle
/**
 * The card lifecycle's work on the merchant's clock (docs/cards.md, docs/clock.md): the
 * replacement executor, the reconciliation of closing cards, card expiry and the expiry of
 * authorisation holds (transactions/expiry.ts). Each is a timed process
 * (so `POST /v1/sandbox/clock/advance` runs it as the clock passes), the executor also a job
 * queued with each request, and one ticker runs them all on each scope's own clock in production.
 */
export const cardLifecycleTimedProcesses: TimedProcess[] = [
  replacementExecutorProcess,
  closingReconcileProcess,
  cardExpiryProcess,
  authorizationExpiryProcess,
];

export const cardLifecycleJobHandlers: Record<string, JobHandler> = { [replacementJobKind]: replacementJob };

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a replacement or a close whose next run is later) could leave due ones out tick
 * after tick. Only what the processes act on: a replacement leased by a run in flight, or an
 * expired card under a replacement in progress, is not due.
 */
export function dueLifecycleScopes(db: Kysely<Database>) {
  const replacementNow = scopeNowSql(
    sql.ref('card_replacements.merchant_id'),
    sql.ref('card_replacements.environment'),
  );
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const transactionNow = scopeNowSql(
    sql.ref('card_transactions.merchant_id'),
    sql.ref('card_transactions.environment'),
  );
  const cardExpiry = sql<Date>`make_timestamptz(exp_year, exp_month, 1, 0, 0, 0, 'UTC') + interval '1 month'`;
  const due = db
    .selectFrom('card_replacements')
    .select(['merchant_id', 'environment', sql<Date>`next_run_at - ${replacementNow}`.as('ahead')])
    .where('status', 'in', [...openReplacementStatuses])
    .where(notLeased)
    .where(sql<boolean>`next_run_at <= ${replacementNow}`)
    .unionAll(
      db
        .selectFrom('cards')
        .select(['merchant_id', 'environment', sql<Date>`close_next_check_at - ${cardNow}`.as('ahead')])
        .where('status', '=', 'closing')
        .where(sql<boolean>`close_next_check_at <= ${cardNow}`),
    )
    .unionAll(
      db
        .selectFrom('cards')
        .select(['merchant_id', 'environment', sql<Date>`${cardExpiry} - ${cardNow}`.as('ahead')])
        .where('status', 'in', ['unactivated', 'active'])
        .where(sql<boolean>`${cardExpiry} <= ${cardNow}`)
        // As `card.expiry` (closing/service.ts): a card under a replacement in progress is ended by the replacement,
        // not expired.
        .where(
          sql<boolean>`NOT EXISTS (SELECT 1 FROM card_replacements r WHERE r.card_id = cards.id AND r.status =
            'processing')`,
        ),
    )
    .unionAll(
      db
        .selectFrom('card_transactions')
        .select(['merchant_id', 'environment', sql<Date>`expires_at - ${transactionNow}`.as('ahead')])
        .where('type', '=', 'authorization')
        .where('status', '=', 'approved')
        .where(sql<boolean>`expires_at <= ${transactionNow}`),
    );
  return longestOverdueScopes(db, due);
}

/** The processes on each scope's own clock, for the service running on its own. */
export const cardLifecycleTickers: Ticker[] = [
  {
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
  },
];
