/**
 * The card area's queries over several sub-areas: the scopes each ticker of shared/workers.ts
 * visits, with work due in any of its sub-areas on the scope's own clock.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import { notLeased, openReplacementStatuses } from './replacements/queries.js';
import { longestOverdueScopes } from './shared/queries.js';

/** The merchant's time for each row of `table`, on the clock of the row's scope. */
const rowNow = (table: 'cards' | 'card_applications' | 'card_replacements' | 'card_transactions') =>
  scopeNowSql(sql.ref(`${table}.merchant_id`), sql.ref(`${table}.environment`));

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a pending supplement, a lock not yet over) could leave due ones out tick after tick.
 */
export function dueTimedScopes(db: Kysely<Database>) {
  const applicationNow = rowNow('card_applications');
  const cardNow = rowNow('cards');
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

/**
 * The scopes with a check due on their own clock, the longest overdue first (a bound on them per
 * tick): a bound over every scope with something open (a check not yet due, a rule set still in
 * its claim's lease) could leave due ones out tick after tick, and so could a bound over due ones
 * in no particular order while more than the bound stay due.
 */
export function dueReconcileScopes(db: Kysely<Database>) {
  const applicationNow = rowNow('card_applications');
  const cardNow = rowNow('cards');
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
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a replacement or a close whose next run is later) could leave due ones out tick
 * after tick. Only what the processes act on: a replacement leased by a run in flight, or an
 * expired card under a replacement in progress, is not due.
 */
export function dueLifecycleScopes(db: Kysely<Database>) {
  const replacementNow = rowNow('card_replacements');
  const cardNow = rowNow('cards');
  const transactionNow = rowNow('card_transactions');
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
