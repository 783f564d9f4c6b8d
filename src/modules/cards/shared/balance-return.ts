/**
 * What every way a card stops shares (replacements/executor.ts, closing/service.ts): its spendable balance back
 * to the member's available balance, once per stopping action, and the events of the card and of
 * a replacement in the reference's envelope.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { accountBalance, postEntry, balanceReturnLines, lifecycleEntryKinds } from '../../../money/index.js';
import { recordEvent } from '../../../events/index.js';
import { externalIdOf, type Db } from './queries.js';
import { markBalanceReturned } from '../cards/queries.js';
import type { CardReplacementRow } from '../replacements/tables.js';
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

/** `card.<status>` (card.closing, card.closed, card.expired, card.replaced, ...), as applications/service.ts emits
 * them. */
export async function emitCardStatus(
  trx: Db,
  c: Pick<CardRow, 'merchant_id' | 'environment' | 'status' | 'id' | 'member_id' | 'status_version'>,
): Promise<void> {
  await recordEvent(trx, {
    merchantId: c.merchant_id,
    environment: c.environment,
    type: `card.${c.status}`,
    object: 'card',
    objectId: c.id,
    externalMemberId: await externalIdOf(trx, c.member_id),
    status: c.status,
    statusVersion: c.status_version,
  });
}

/** `card.replacement.<status>` (requested, processing, completed, failed). */
export async function emitReplacement(trx: Db, r: CardReplacementRow): Promise<void> {
  await recordEvent(trx, {
    merchantId: r.merchant_id,
    environment: r.environment,
    type: `card.replacement.${r.status}`,
    object: 'card_replacement',
    objectId: r.id,
    externalMemberId: await externalIdOf(trx, r.member_id),
    status: r.status,
    statusVersion: r.status_version,
  });
}
