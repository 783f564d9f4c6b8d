/**
 * What every card network message shares (service.ts, follow.ts, expiry.ts): the card it names,
 * the simulated network that sends it, and what it writes: its transaction row, its ledger entry
 * (referenced by the transaction) and its `card.transaction.<type>` event.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { minorFromDb, postEntry, type EntryLine } from '../../../money/index.js';
import type { CardNetworkMessage } from '../../../upstreams/card/port.js';
import type { CardCaller, Db } from '../shared/queries.js';
import { emitCardEvent } from '../shared/events.js';
import { cardOrNotFound } from '../cards/queries.js';
import type { CardRow } from '../cards/tables.js';
import { cardStopped } from '../cards/state.js';
import { cardTransactionReferenceType } from './rules.js';
import { insertTransactionRow } from './queries.js';
import type { CardReversalReason, CardTransactionRow, CardTransactionType } from './tables.js';
import { rowScope } from '../../../db/owned-by.js';

/** `card.transaction.<type>`. */
export const emit = (trx: Transaction<Database>, row: CardTransactionRow) =>
  emitCardEvent(trx, row, { type: `card.transaction.${row.type}`, object: 'card_transaction', status: row.status });

export async function post(
  trx: Transaction<Database>,
  card: CardRow,
  kind: string,
  referenceId: string,
  lines: EntryLine[],
): Promise<void> {
  await postEntry(trx, {
    environment: card.environment,
    merchantId: card.merchant_id,
    kind,
    referenceType: cardTransactionReferenceType,
    referenceId,
    asset: card.currency,
    lines,
  });
}

export async function insertTransaction(
  trx: Transaction<Database>,
  card: CardRow,
  now: Date,
  t: {
    type: CardTransactionType;
    status: CardTransactionRow['status'];
    amount: bigint;
    currency: string;
    merchantName: string;
    mcc: string;
    declineReason?: string;
    authorizationId?: string;
    networkRef: string;
    expiresAt?: Date;
    reversalReason?: CardReversalReason;
  },
): Promise<CardTransactionRow> {
  return insertTransactionRow(trx, {
    id: newId('ctx'),
    merchant_id: card.merchant_id,
    environment: card.environment,
    member_id: card.member_id,
    card_id: card.id,
    type: t.type,
    status: t.status,
    status_version: 1,
    amount: t.amount,
    currency: t.currency,
    merchant_name: t.merchantName,
    mcc: t.mcc,
    decline_reason: t.declineReason ?? null,
    authorization_id: t.authorizationId ?? null,
    network_ref: t.networkRef,
    expires_at: t.expiresAt ?? null,
    reversal_reason: t.reversalReason ?? null,
    created_at: now,
    updated_at: now,
  });
}

/**
 * Where money that comes back lands (a reversed hold, a refund, the rest of a smaller clearing):
 * the card, or the member's available balance when the card stopped (`cardStopped`: closing,
 * closed, replaced, expired, frozen), never onto a card whose balance was returned.
 */
export const returnsTo = (card: CardRow) =>
  cardStopped({ status: card.status, frozenAt: card.frozen_at }) ? ('available' as const) : ('card' as const);

export const authFacts = (a: CardTransactionRow) => ({
  status: a.status,
  amount: minorFromDb(a.amount),
  reversedAmount: minorFromDb(a.reversed_amount),
  reversalReason: a.reversal_reason,
});

export function networkOf(ctx: ServiceContext) {
  const send = ctx.upstreams.card.sandboxNetworkMessage;
  if (!send) throw new ApiError('not_found');
  return (card: CardRow, m: Omit<CardNetworkMessage, 'cardRef'>) =>
    send.call(ctx.upstreams.card, rowScope(card), { ...m, cardRef: card.upstream_ref });
}

/** The card a message names: the caller's, else not_found. */
export async function merchantCard(db: Db, caller: CardCaller, id: string): Promise<CardRow> {
  const card = await cardOrNotFound(db, caller, id);
  return card;
}
