/** Reads and writes of card top-ups (the order, its reads, the dispatch claim). */
import type { Insertable, Transaction } from 'kysely';
import { ownedBy } from '../../../db/owned-by.js';
import type { Database } from '../../../db/schema.js';
import { type CardCaller, type Db } from '../shared/queries.js';
import { withPrefix } from '../../../platform/ids.js';
import type { CardTopupRow, CardTopupsTable } from './tables.js';

type Trx = Transaction<Database>;

export function insertTopUp(trx: Trx, values: Insertable<CardTopupsTable>): Promise<CardTopupRow> {
  return trx.insertInto('card_topups').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * One top-up of the caller's: under its card, or by its id alone when `cardId` is undefined.
 */
export async function findTopUp(
  db: Db,
  caller: CardCaller,
  cardId: string | undefined,
  id: string,
): Promise<CardTopupRow | undefined> {
  let q = db.selectFrom('card_topups').selectAll().where('id', '=', withPrefix('ctu', id)).where(ownedBy(caller));
  if (cardId !== undefined) q = q.where('card_id', '=', withPrefix('crd', cardId));
  return q.executeTakeFirst();
}

/** A card's top-ups: for `keysetPage`. */
export function topUpsOfCard(db: Db, cardId: string) {
  return db.selectFrom('card_topups').selectAll().where('card_id', '=', cardId);
}

/** A top-up by its id alone (the operator's reads, the dispatch). */
export function topUpById(db: Db, id: string): Promise<CardTopupRow | undefined> {
  return db.selectFrom('card_topups').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function cardIdOfTopUp(trx: Trx, id: string): Promise<string> {
  return (await trx.selectFrom('card_topups').select('card_id').where('id', '=', id).executeTakeFirstOrThrow()).card_id;
}

export function topUpCardAndStatus(trx: Trx, id: string) {
  return trx.selectFrom('card_topups').select(['card_id', 'status']).where('id', '=', id).executeTakeFirst();
}

/** The card's top-ups not yet sent to the issuer, oldest first. */
export function pendingTopUpIds(trx: Trx, cardId: string, limit: number) {
  return trx
    .selectFrom('card_topups')
    .select('id')
    .where('card_id', '=', cardId)
    .where('status', '=', 'pending')
    .orderBy('seq')
    .limit(limit)
    .execute();
}
