/** Reads and writes of card top-ups (the order, its reads, the dispatch claim). */
import type { Insertable } from 'kysely';
import { ownedById, type CardCaller, type Db, type Trx } from '../shared/queries.js';
import { withPrefix } from '../../../platform/ids.js';
import type { CardTopupRow, CardTopupsTable } from './tables.js';
import { inRows } from '../../../db/in-rows.js';
import type { CardRow } from '../cards/tables.js';
import type { CardProductRow } from '../products/tables.js';

/**
 * One top-up of the caller's: under its card, or by its id alone when `cardId` is undefined.
 */
export async function findTopUp(
  db: Db,
  caller: CardCaller,
  cardId: string | undefined,
  id: string,
): Promise<CardTopupRow | undefined> {
  let q = ownedById(db, 'card_topups', caller, id);
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

/**
 * The cards of top-ups, locked in card id order (one statement: the order of docs/locking.md, the card
 * before its merchant's write lock, as every stop locks it), with what the dispatch and the events
 * need: each top-up's id, its card's state and issuer reference, and the member's external id (the
 * events' `external_member_id`; neither changes). `pendingOnly`: only top-ups still `pending`
 * (the others left out, and no lock taken for them).
 */
export function lockCardsOfTopUps(trx: Trx, ids: readonly string[], pendingOnly: boolean) {
  let q = trx
    .selectFrom('card_topups as t')
    .innerJoin('cards as c', 'c.id', 't.card_id')
    .innerJoin('members as m', 'm.id', 't.member_id')
    .select(['t.id', 't.card_id', 'c.status', 'c.frozen_at', 'c.upstream_ref', 'm.external_member_id'])
    .where('t.id', 'in', [...ids]);
  if (pendingOnly) q = q.where('t.status', '=', 'pending');
  return q.orderBy('c.id').forNoKeyUpdate('c').execute();
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

/** The cards of a batch of top-ups, each its member's own, locked in id order (one statement: the order of
 * docs/locking.md, a card before its merchant's write lock). */
export function lockOwnedCards(
  trx: Trx,
  cards: readonly { id: string; merchantId: string; environment: string; memberId: string }[],
): Promise<CardRow[]> {
  if (cards.length === 0) return Promise.resolve([]);
  return trx
    .selectFrom('cards')
    .selectAll()
    .where(
      inRows(
        ['id', 'merchant_id', 'environment', 'member_id'],
        cards.map((c) => [c.id, c.merchantId, c.environment, c.memberId]),
      ),
    )
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/** Card products by their seqs (one statement). */
export function productRowsBySeq(db: Db, seqs: readonly string[]): Promise<CardProductRow[]> {
  if (seqs.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('card_products')
    .selectAll()
    .where('seq', 'in', [...seqs])
    .execute();
}

/** Which of the cards have a replacement `requested` or `processing` (one statement). */
export async function cardsReplacing(db: Db, cardIds: readonly string[]): Promise<Set<string>> {
  if (cardIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('card_replacements')
    .select('card_id')
    .where('card_id', 'in', [...cardIds])
    .where('status', 'in', ['requested', 'processing'])
    .execute();
  return new Set(rows.map((r) => r.card_id));
}

/** Top-ups in one statement, in the order given. */
export async function insertTopUps(trx: Trx, rows: readonly Insertable<CardTopupsTable>[]): Promise<CardTopupRow[]> {
  if (rows.length === 0) return [];
  const inserted = await trx
    .insertInto('card_topups')
    .values([...rows])
    .returningAll()
    .execute();
  const byId = new Map(inserted.map((r) => [r.id, r]));
  return rows.map((r) => byId.get(r.id as string)!);
}
