import { withIdPrefix, type CardCaller, type Db, type MemberCardCaller } from '../shared/queries.js';
import type { CardRow } from './tables.js';

/** Reads of the card record (every card sub-area finds its card here). */

export async function findCard(
  db: Db,
  caller: CardCaller,
  id: string,
  forUpdate = false,
): Promise<CardRow | undefined> {
  let q = db
    .selectFrom('cards')
    .selectAll()
    .where('id', '=', withIdPrefix('crd', id))
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return forUpdate ? q.forNoKeyUpdate().executeTakeFirst() : q.executeTakeFirst();
}

export function cardsQuery(db: Db, caller: MemberCardCaller) {
  return db
    .selectFrom('cards')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment)
    .where('member_id', '=', caller.memberId);
}
