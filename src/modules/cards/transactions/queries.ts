/** Reads and writes of card transactions (authorisations and the network's follow-ups, hold expiry). */
import type { Insertable, Updateable } from 'kysely';
import { dueFirst, earliestDue } from '../../../db/earliest-due.js';
import { inScope } from '../../../db/owned-by.js';
import type { ClockScope } from '../../../platform/clock.js';
import { findOwned, type CardCaller, type Db, type Trx } from '../shared/queries.js';
import { withPrefix } from '../../../platform/ids.js';
import type { CardTransactionRow, CardTransactionType, CardTransactionsTable } from './tables.js';

/** A card's transactions, optionally of one type: for `keysetPage`. */
export function transactionsOfCard(db: Db, cardId: string, type: CardTransactionType | undefined) {
  let q = db.selectFrom('card_transactions').selectAll().where('card_id', '=', cardId);
  if (type) q = q.where('type', '=', type);
  return q;
}

/** One transaction of the caller (a member's own only) by its id alone. */
export function findTransaction(db: Db, caller: CardCaller, id: string): Promise<CardTransactionRow | undefined> {
  return findOwned(db, 'card_transactions', caller, id);
}

/** The card's authorisations approved or cleared since `since` (what may count against the limits). */
export function authorizationsSince(trx: Trx, cardId: string, since: Date) {
  return trx
    .selectFrom('card_transactions')
    .select(['status', 'amount', 'cleared_amount', 'reversed_amount'])
    .where('card_id', '=', cardId)
    .where('type', '=', 'authorization')
    .where('status', 'in', ['approved', 'cleared'])
    .where('created_at', '>=', since)
    .execute();
}

export function insertTransactionRow(trx: Trx, values: Insertable<CardTransactionsTable>): Promise<CardTransactionRow> {
  return trx.insertInto('card_transactions').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A transaction of this card, locked (undefined: none). */
export function lockTransactionOfCard(trx: Trx, cardId: string, id: string): Promise<CardTransactionRow | undefined> {
  return trx
    .selectFrom('card_transactions')
    .selectAll()
    .where('id', '=', withPrefix('ctx', id))
    .where('card_id', '=', cardId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

export function lockTransaction(trx: Trx, id: string): Promise<CardTransactionRow> {
  return trx
    .selectFrom('card_transactions')
    .selectAll()
    .where('id', '=', id)
    .forNoKeyUpdate()
    .executeTakeFirstOrThrow();
}

/** The `expired` reversal of an authorisation, if recorded. */
export function expiryReversalOf(trx: Trx, cardId: string, authorizationId: string) {
  return trx
    .selectFrom('card_transactions')
    .select('amount')
    .where('card_id', '=', cardId)
    .where('authorization_id', '=', authorizationId)
    .where('type', '=', 'reversal')
    .where('reversal_reason', '=', 'expired')
    .executeTakeFirst();
}

/** An authorisation moves to `status` (its status version up by one), with `extra` columns. */
export async function moveAuthorization(
  trx: Trx,
  id: string,
  status: 'cleared' | 'reversed',
  now: Date,
  extra: Updateable<CardTransactionsTable> = {},
): Promise<void> {
  await trx
    .updateTable('card_transactions')
    .set((eb) => ({ status, status_version: eb('status_version', '+', 1), updated_at: now, ...extra }))
    .where('id', '=', id)
    .execute();
}

/** An authorisation's amounts change, its status does not (a partial reversal, a refund). */
export async function updateTransactionAmounts(
  trx: Trx,
  id: string,
  set: Updateable<CardTransactionsTable>,
): Promise<void> {
  await trx.updateTable('card_transactions').set(set).where('id', '=', id).execute();
}

function openAuthorizations(db: Db, scope: ClockScope) {
  return db
    .selectFrom('card_transactions')
    .where(inScope(scope))
    .where('type', '=', 'authorization')
    .where('status', '=', 'approved');
}

/** Timed process `card.authorization_expiry`: the earliest expiry of the scope's open authorisations. */
export async function nextAuthorizationExpiry(db: Db, scope: ClockScope): Promise<Date | null> {
  return earliestDue(openAuthorizations(db, scope), 'expires_at');
}

/** The scope's open authorisations expired at `now`, the earliest first. */
export function expiredAuthorizations(db: Db, scope: ClockScope, now: Date, limit: number) {
  return dueFirst(openAuthorizations(db, scope).select(['id', 'card_id']), 'expires_at', now, limit).execute();
}
