/** Reads and writes of a card's controls: its merchant rules, its limits, its CVV unblock calls. */
import type { Db } from '../shared/queries.js';

/** The card's merchant rules row (undefined: none ever set). */
export function merchantRulesOfCard(db: Db, cardId: string) {
  return db.selectFrom('card_merchant_rules').selectAll().where('card_id', '=', cardId).executeTakeFirst();
}
