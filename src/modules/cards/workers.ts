import { sql, type Kysely } from 'kysely';
import { scopeNowSql } from '../../platform/clock.js';
import type { Database } from '../../db/schema.js';
import type { JobHandler, Ticker, TimedProcess } from '../../jobs/types.js';
import { limitsPushJobKind, pushLimits } from './controls/service.js';
import { liftActivationLocks } from './cards/service.js';
import { decide } from './applications/service.js';
import { findApplication, longestOverdueScopes } from './shared/queries.js';
import { voidIssuedCard, voidIssuedCardJobKind } from './applications/void-issued.js';

/** Supplements expired per run (a bound on one batch). */
const expiryBatchMax = 100;

/**
 * Work due on a merchant's clock (docs/clock.md): supplement work orders that expire (application
 * `failed`, fee refunded, no card) and activation locks that end. `POST /v1/sandbox/clock/advance`
 * runs them as the clock passes; the housekeeping of production runs them on real time the same way.
 */
export const cardTimedProcesses: TimedProcess[] = [
  {
    name: 'card.supplement_expiry',
    async nextDue(db, scope) {
      const row = await db.selectFrom('card_applications').select(sql<Date | null>`min(supplement_expires_at)`.as('due'))
        .where('merchant_id', '=', scope.merchantId).where('environment', '=', scope.environment)
        .where('status', '=', 'need_docs').where('supplement_status', '=', 'pending').executeTakeFirst();
      return row?.due ? new Date(row.due) : null;
    },
    async runDue(ctx, scope, now) {
      const due = await ctx.db.selectFrom('card_applications').select('id')
        .where('merchant_id', '=', scope.merchantId).where('environment', '=', scope.environment)
        .where('status', '=', 'need_docs').where('supplement_status', '=', 'pending').where('supplement_expires_at', '<=', now)
        .orderBy('supplement_expires_at').limit(expiryBatchMax).execute();
      for (const { id } of due) {
        await ctx.db.transaction().execute(async (trx) => {
          const app = await findApplication(trx, scope, id, true);
          if (app?.status === 'need_docs' && app.supplement_status === 'pending') await decide(ctx, trx, app, 'expired');
        });
      }
    },
  },
  {
    name: 'card.activation_unlock',
    async nextDue(db, scope) {
      const row = await db.selectFrom('cards').select(sql<Date | null>`min(locked_until)`.as('due'))
        .where('merchant_id', '=', scope.merchantId).where('environment', '=', scope.environment).where('locked_until', 'is not', null).executeTakeFirst();
      return row?.due ? new Date(row.due) : null;
    },
    runDue: (ctx, scope, now) => liftActivationLocks(ctx.db, scope, now),
  },
];

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a pending supplement, a lock not yet over) could leave due ones out tick after tick.
 */
export function dueTimedScopes(db: Kysely<Database>) {
  const applicationNow = scopeNowSql(sql.ref('card_applications.merchant_id'), sql.ref('card_applications.environment'));
  const cardNow = scopeNowSql(sql.ref('cards.merchant_id'), sql.ref('cards.environment'));
  const due = db.selectFrom('card_applications').select(['merchant_id', 'environment', sql<Date>`supplement_expires_at - ${applicationNow}`.as('ahead')])
    .where('status', '=', 'need_docs').where('supplement_status', '=', 'pending').where(sql<boolean>`supplement_expires_at <= ${applicationNow}`)
    .unionAll(db.selectFrom('cards').select(['merchant_id', 'environment', sql<Date>`locked_until - ${cardNow}`.as('ahead')])
      .where('locked_until', 'is not', null).where(sql<boolean>`locked_until <= ${cardNow}`));
  return longestOverdueScopes(db, due);
}

/** The same processes on each scope's own clock, for the service running on its own (not only on a sandbox advance). */
export const cardTickers: Ticker[] = [{
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
}];

/** Queue handlers: the push of recorded limits to the issuer; the cancellation of a card issued for a failed application. */
export const cardJobHandlers: Record<string, JobHandler> = { [limitsPushJobKind]: pushLimits, [voidIssuedCardJobKind]: voidIssuedCard };
