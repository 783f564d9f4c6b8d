import { ApiError } from '../../../platform/errors.js';
import { findOwned, type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import { earliestDue } from '../../../db/earliest-due.js';
import { ownedBy, inScope } from '../../../db/owned-by.js';
import type { Insertable, Updateable } from 'kysely';
import type { CardRow, CardsTable } from './tables.js';

/** Reads of the card record (every card sub-area finds its card here). */

/** The caller's card by its id, locked when `forUpdate`. */
export function findCard(db: Db, caller: CardCaller, id: string, forUpdate = false): Promise<CardRow | undefined> {
  return findOwned(db, 'cards', caller, id, forUpdate);
}

/** The caller's card by its id, locked when `forUpdate`; `not_found` when it has none of that id. */
export async function cardOrNotFound(db: Db, caller: CardCaller, id: string, forUpdate = false): Promise<CardRow> {
  const card = await findCard(db, caller, id, forUpdate);
  if (!card) throw new ApiError('not_found', 'No such card.');
  return card;
}

export function cardsQuery(db: Db, caller: MemberCardCaller) {
  return db.selectFrom('cards').selectAll().where(ownedBy(caller));
}

/** A card locked for a change of its state or its money (`FOR NO KEY UPDATE`: other tables reference it). */
export async function lockCardById(trx: Db, id: string): Promise<CardRow> {
  return trx.selectFrom('cards').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirstOrThrow();
}

export function cardById(db: Db, id: string): Promise<CardRow> {
  return db.selectFrom('cards').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export function cardCurrencyOf(db: Db, id: string): Promise<{ currency: string }> {
  return db.selectFrom('cards').select('currency').where('id', '=', id).executeTakeFirstOrThrow();
}

/** A security replacement stops the card at once (`frozenAt`: the first freeze kept). */
export async function freezeCard(trx: Db, id: string, frozenAt: Date, now: Date): Promise<void> {
  await trx.updateTable('cards').set({ frozen_at: frozenAt, updated_at: now }).where('id', '=', id).execute();
}

/** Any change of a card by id; answers the row. */
export function updateCard(trx: Db, id: string, set: Updateable<CardsTable>): Promise<CardRow> {
  return trx.updateTable('cards').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export function insertCard(trx: Db, values: Insertable<CardsTable>): Promise<CardRow> {
  return trx.insertInto('cards').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A non-security replacement voids the card's inventory row. */
export async function voidCardInventory(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('cards').set({ inventory_status: 'voided', updated_at: now }).where('id', '=', id).execute();
}

/** A failed replacement gives a voided inventory row its status back. */
export async function restoreCardInventory(
  trx: Db,
  id: string,
  inventory: CardsTable['inventory_status'],
  now: Date,
): Promise<void> {
  await trx
    .updateTable('cards')
    .set({ inventory_status: inventory, updated_at: now })
    .where('id', '=', id)
    .where('inventory_status', '=', 'voided')
    .execute();
}

export async function markBalanceReturned(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('cards').set({ balance_returned_at: now }).where('id', '=', id).execute();
}

/** Any change of a card by id, answering nothing. */
export async function setCard(trx: Db, id: string, set: Updateable<CardsTable>): Promise<void> {
  await trx.updateTable('cards').set(set).where('id', '=', id).execute();
}

export function cardByIdIfAny(db: Db, id: string): Promise<CardRow | undefined> {
  return db.selectFrom('cards').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Timed process: activation locks whose 24 hours have passed on the merchant's clock are lifted (the record shows
 * `locked_until: null`). */
export async function liftActivationLocks(db: Db, scope: CardCaller, now: Date): Promise<void> {
  // The cards locked in id order first, as a batch of top-ups locks its cards (docs/locking.md): an
  // UPDATE alone locks its rows in no fixed order and could wait in a cycle with such a batch.
  await db
    .updateTable('cards')
    .set({ locked_until: null, activation_failures: 0, updated_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('cards')
        .select('id')
        .where(inScope(scope))
        .where('locked_until', 'is not', null)
        .where('locked_until', '<=', now)
        .orderBy('id')
        .forNoKeyUpdate(),
    )
    .execute();
}

/** Timed process `card.activation_unlock`: the earliest end of the scope's activation locks. */
export async function nextActivationUnlock(db: Db, scope: CardCaller): Promise<Date | null> {
  return earliestDue(
    db.selectFrom('cards').where(inScope(scope)).where('locked_until', 'is not', null),
    'locked_until',
  );
}

/** A card's product (the card record shows its scheme). */
export function productOfCard(db: Db, card: CardRow) {
  return db.selectFrom('card_products').selectAll().where('seq', '=', card.product_seq).executeTakeFirstOrThrow();
}
