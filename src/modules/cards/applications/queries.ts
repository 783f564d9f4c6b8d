import { withIdPrefix, type CardCaller, type Db } from '../shared/queries.js';
import type { CardApplicationRow } from './tables.js';

/** Reads of card applications. */

export async function findApplication(
  db: Db,
  caller: CardCaller,
  id: string,
  forUpdate = false,
): Promise<CardApplicationRow | undefined> {
  let q = db
    .selectFrom('card_applications')
    .selectAll()
    .where('id', '=', withIdPrefix('cap', id))
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return forUpdate ? q.forNoKeyUpdate().executeTakeFirst() : q.executeTakeFirst();
}

export function sourceAssetOfApplication(db: Db, id: string): Promise<{ source_asset: string }> {
  return db.selectFrom('card_applications').select('source_asset').where('id', '=', id).executeTakeFirstOrThrow();
}
