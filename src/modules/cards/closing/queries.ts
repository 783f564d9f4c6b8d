/** Reads and writes of closing and expiry: the closing cards to reconcile, the cards past their expiry month. */
import { sql } from 'kysely';
import { dueFirst, earliestDue } from '../../../db/earliest-due.js';
import { inScope } from '../../../db/owned-by.js';
import type { ClockScope } from '../../../platform/clock.js';
import type { Db } from '../shared/queries.js';

/** The scope's closing cards (the closing reconciliation's timed process). */
const closingCards = (db: Db, scope: ClockScope) =>
  db.selectFrom('cards').where(inScope(scope)).where('status', '=', 'closing');

/** Timed process `card.closing_reconcile`: the earliest next check of the scope's closing cards. */
export async function nextClosingCheck(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(closingCards(db, scope), 'close_next_check_at');
}

/** The scope's closing cards whose check is due, the longest waiting first. */
export function dueClosingCardIds(db: Db, scope: ClockScope, now: Date, limit: number) {
  return dueFirst(closingCards(db, scope).select('id'), 'close_next_check_at', now, limit).execute();
}

/** Claims one due check by pushing the card's next check out to `leaseUntil` (undefined: another run has it). */
export function claimClosingCheck(db: Db, id: string, now: Date, leaseUntil: Date) {
  return db
    .updateTable('cards')
    .set({ close_next_check_at: leaseUntil })
    .where('id', '=', id)
    .where('status', '=', 'closing')
    .where('close_next_check_at', '<=', now)
    .returningAll()
    .executeTakeFirst();
}

/** The first instant after a card's expiry month, as SQL (UTC). */
const expiresAtSql = sql<Date>`make_timestamptz(cards.exp_year, cards.exp_month, 1, 0, 0, 0, 'UTC') + interval
  '1 month'`;
const noReplacementUnderWay = sql<boolean>`NOT EXISTS (SELECT 1 FROM card_replacements r WHERE r.card_id = cards.id
  AND r.status = 'processing')`;

function expiringCards(db: Db, scope: ClockScope) {
  return db
    .selectFrom('cards')
    .where(inScope(scope))
    .where('status', 'in', ['unactivated', 'active'])
    .where(noReplacementUnderWay);
}

/** Timed process `card.expiry`: the earliest expiry of the scope's cards that can expire (none under a replacement in
 * progress, which ends them itself). */
export async function nextExpiry(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(expiringCards(db, scope), expiresAtSql);
}

/** The scope's cards past their expiry month at `now`, oldest first. */
export function expiredCardIds(db: Db, scope: ClockScope, now: Date, limit: number) {
  return expiringCards(db, scope).select('id').where(expiresAtSql, '<=', now).orderBy('seq').limit(limit).execute();
}
