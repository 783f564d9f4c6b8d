/**
 * The card area's queries over several sub-areas: the scopes each ticker of shared/workers.ts
 * visits, with work due in any of its sub-areas on the scope's own clock.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import { notLeased, openReplacementStatuses } from './replacements/queries.js';
import { longestOverdueScopes } from './shared/queries.js';

type TimedTable = 'cards' | 'card_applications' | 'card_replacements' | 'card_transactions';

/** The merchant's time for each row of `table`, on the clock of the row's scope. */
const rowNow = (table: TimedTable) => scopeNowSql(sql.ref(`${table}.merchant_id`), sql.ref(`${table}.environment`));

/**
 * The rows of `table` whose `due` (a column, or an expression of the row) has come on their scope's clock: their
 * scope and how far ahead of its now `due` is (≤ 0), to narrow with the work's own conditions.
 */
function dueRows<T extends TimedTable>(db: Kysely<Database>, table: T, due: string | RawBuilder<Date>) {
  const now = rowNow(table);
  const at = typeof due === 'string' ? sql.ref(due) : due;
  // Written for one table (Kysely cannot check a column of a table left open): each has the scope columns.
  const rows = db
    .selectFrom(table as TimedTable as 'cards')
    .select(['merchant_id', 'environment', sql<Date>`${at} - ${now}`.as('ahead')])
    .where(sql<boolean>`${at} <= ${now}`);
  return rows as unknown as SelectQueryBuilder<
    Database,
    T,
    { merchant_id: string; environment: Environment; ahead: Date }
  >;
}

/**
 * The scopes with work due on their own clock (a bound on them per tick): a bound over scopes
 * merely waiting (a pending supplement, a lock not yet over) could leave due ones out tick after tick.
 */
export function dueTimedScopes(db: Kysely<Database>) {
  const due = dueRows(db, 'card_applications', 'supplement_expires_at')
    .where('status', '=', 'need_docs')
    .where('supplement_status', '=', 'pending')
    .unionAll(dueRows(db, 'cards', 'locked_until').where('locked_until', 'is not', null));
  return longestOverdueScopes(db, due);
}

/**
 * The scopes with a check due on their own clock, the longest overdue first (a bound on them per
 * tick): a bound over every scope with something open (a check not yet due, a rule set still in
 * its claim's lease) could leave due ones out tick after tick, and so could a bound over due ones
 * in no particular order while more than the bound stay due.
 */
export function dueReconcileScopes(db: Kysely<Database>) {
  const cardNow = rowNow('cards');
  const applications = dueRows(db, 'card_applications', 'next_check_at')
    .where('status', '=', 'pending')
    .where('upstream_outcome', '<>', 'accepted')
    .where('next_check_at', 'is not', null);
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
  const cardExpiry = sql<Date>`make_timestamptz(exp_year, exp_month, 1, 0, 0, 0, 'UTC') + interval '1 month'`;
  const due = dueRows(db, 'card_replacements', 'next_run_at')
    .where('status', 'in', [...openReplacementStatuses])
    .where(notLeased)
    .unionAll(dueRows(db, 'cards', 'close_next_check_at').where('status', '=', 'closing'))
    .unionAll(
      dueRows(db, 'cards', cardExpiry)
        .where('status', 'in', ['unactivated', 'active'])
        // As `card.expiry` (closing/service.ts): a card under a replacement in progress is ended by the replacement,
        // not expired.
        .where(
          sql<boolean>`NOT EXISTS (SELECT 1 FROM card_replacements r WHERE r.card_id = cards.id AND r.status =
            'processing')`,
        ),
    )
    .unionAll(
      dueRows(db, 'card_transactions', 'expires_at')
        .where('type', '=', 'authorization')
        .where('status', '=', 'approved'),
    );
  return longestOverdueScopes(db, due);
}
