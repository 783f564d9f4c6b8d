/**
 * What every way a card stops shares (replacements/executor.ts, closing/service.ts): its spendable balance back
 * to the member's available balance, once per stopping action (their events: events.ts).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { accountBalance, postEntry, balanceReturnLines, lifecycleEntryKinds } from '../../../money/index.js';
import { markBalanceReturned } from '../cards/queries.js';
import type { CardRow } from '../cards/tables.js';

/**
 * Moves what `card:<id>` holds to available, in the caller's transaction (the one that also
 * changes the card's state), and answers the amount (0n: nothing to move, nothing posted). The
 * entry is keyed by the stopping action (`referenceType`, `referenceId`), so it posts once per
 * action whatever runs it again. Held amounts (`card_held:<id>`) are not touched: a clearing takes
 * them, a reversal sends them to available (`heldReleaseToAvailableLines`).
 */
export async function returnCardBalance(
  trx: Transaction<Database>,
  card: CardRow,
  reference: { type: string; id: string },
  now: Date,
): Promise<bigint> {
  const ref = { owner: 'member' as const, memberId: card.member_id, bucket: 'card' as const, cardId: card.id };
  const amount = await accountBalance(trx, card.environment, ref, card.currency);
  if (amount > 0n) {
    await postEntry(trx, {
      environment: card.environment,
      merchantId: card.merchant_id,
      kind: lifecycleEntryKinds.balanceReturn,
      referenceType: reference.type,
      referenceId: reference.id,
      asset: card.currency,
      lines: balanceReturnLines({ memberId: card.member_id, cardId: card.id, amount }),
    });
  }
  await markBalanceReturned(trx, card.id, now);
  return amount;
}
