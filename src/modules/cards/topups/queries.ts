/** Reads and writes of card top-ups (the order, its reads, the dispatch claim). */
import { sql, type Insertable, type Transaction } from 'kysely';
import { ownedBy } from '../../../db/owned-by.js';
import type { Database } from '../../../db/schema.js';
import { orderNowSql } from '../../../provider-orders/index.js';
import { withIdPrefix, type CardCaller, type Db } from '../shared/queries.js';
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
  let q = db.selectFrom('card_topups').selectAll().where('id', '=', withIdPrefix('ctu', id)).where(ownedBy(caller));
  if (cardId !== undefined) q = q.where('card_id', '=', withIdPrefix('crd', cardId));
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

/**
 * Moves `pending` → `processing` once and records that the issuer call starts now; should this
 * process stop during the call (`callSeconds`), reconciliation takes the top-up over.
 */
export function claimTopUpDispatch(trx: Trx, id: string, callSeconds: number): Promise<CardTopupRow | undefined> {
  return trx
    .updateTable('card_topups')
    .set((eb) => ({
      status: 'processing',
      status_version: eb('status_version', '+', 1),
      upstream_outcome: 'pending',
      dispatch_started_at: sql<Date>`now()` as unknown as Date,
      // Should this process stop during the call, reconciliation takes the top-up over.
      next_check_at: sql<Date>`now() + make_interval(secs =>
          ${callSeconds})` as unknown as Date,
      updated_at: orderNowSql({ table: 'card_topups' }),
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}
