/**
 * The network's follow-ups of an authorisation (docs/cards.md "Card money"): a clearing sends the
 * held money to the network, a reversal gives the hold back, a refund pays cleared money back onto
 * the card; each with its ledger entry, its transaction row and its event in the caller's transaction.
 */
import type { Transaction, Updateable } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import {
  minorFromDb,
  parseAmount,
  clearingLines,
  refundLines,
  reversalLines,
  cardMoneyEntryKinds,
} from '../../../money/index.js';
import { clearableHold, heldOf, reversalOf } from './rules.js';
import type { CardTransactionRow, CardTransactionsTable } from './tables.js';
import { expiryReversalOf, lockTransactionOfCard, moveAuthorization, updateTransactionAmounts } from './queries.js';
import { transactionView } from './views.js';
import { type CardCaller } from '../shared/queries.js';
import { lockCardById } from '../cards/queries.js';
import type { CardRow } from '../cards/tables.js';
import { authFacts, emit, insertTransaction, merchantCard, networkOf, post, returnsTo } from './records.js';
import { assetScale } from '../../assets/index.js';

export interface FollowBody {
  transaction_id: string;
  amount?: string;
}

/** The authorisation a follow-up message names, locked; on this card. */
async function lockedAuthorization(trx: Transaction<Database>, card: CardRow, id: string): Promise<CardTransactionRow> {
  const auth = await lockTransactionOfCard(trx, card.id, id);
  if (!auth || auth.type !== 'authorization') throw new ApiError('not_found', 'No such authorisation on this card.');
  return auth;
}

export type FollowKind = 'clearing' | 'reversal' | 'refund';

/** What an expired authorisation still held when its hold expired (its `expired` reversal), the authorised amount if
 * none is recorded. */
async function expiredHold(trx: Transaction<Database>, auth: CardTransactionRow): Promise<bigint> {
  const released = await expiryReversalOf(trx, auth.card_id, auth.id);
  return released ? minorFromDb(released.amount) : minorFromDb(auth.amount);
}

/**
 * Sandbox clearing, reversal and refund: the network's follow-up of an authorisation.
 * - clearing (`amount` defaults to what is still held; may differ): of an `approved`
 *   authorisation, against what it still holds (`clearableHold`: the authorised amount less partial
 *   reversals); the authorisation becomes `cleared`. A late presentment of an authorisation whose
 *   hold expired still clears, all of it from the card balance (`insufficient_balance` when short).
 * - reversal (`amount` defaults to all that is still held): of an `approved` (not cleared)
 *   authorisation: that much of the hold goes back (`reversalOf`: more than zero, at most the hold,
 *   else `amount_out_of_range`); the whole hold → `reversed`, part of it → stays `approved` with
 *   the smaller hold (`reversed_amount` grows), which is what then counts against the limits.
 * - refund (`amount` defaults to what is left to refund): of a `cleared` authorisation, at most
 *   the cleared amount less what was refunded (`amount_out_of_range`).
 * Answers the new transaction. A message not valid in the authorisation's state: `state_invalid`.
 * On a card that stopped (`cardStopped`: closing, closed, replaced, expired, frozen) whatever comes
 * back (the reversed hold, a refund, the rest of a smaller clearing) goes to the member's available
 * balance, never onto the card whose balance was returned; a clearing still takes its hold from
 * card_held.
 */
export async function follow(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: CardCaller,
  id: string,
  kind: FollowKind,
  body: FollowBody,
) {
  const found = await merchantCard(trx, caller, id);
  const scale = await assetScale(trx, found.currency);
  const requested = body.amount === undefined ? undefined : parseAmount(body.amount, scale);
  // The card row locked first (as the authorisation and every stopping action lock it): a card
  // stopping meanwhile either returned its balance before this money arrives (then it goes to
  // available) or returns it after (then this money is on the card and goes back with it).
  const card = await lockCardById(trx, found.id);
  const to = returnsTo(card);
  const auth = await lockedAuthorization(trx, card, body.transaction_id);
  const { networkRef } = await networkOf(ctx)(card, {
    type: kind,
    amountMinor: requested ?? minorFromDb(auth.amount),
    currency: card.currency,
    merchantName: auth.merchant_name,
    mcc: auth.mcc,
  });
  const now = await ctx.clock.now(trx, caller);
  const base = {
    currency: card.currency,
    merchantName: auth.merchant_name,
    mcc: auth.mcc,
    authorizationId: auth.id,
    networkRef,
    status: 'posted' as const,
  };
  const move = (status: 'cleared' | 'reversed', extra: Updateable<CardTransactionsTable> = {}) =>
    moveAuthorization(trx, auth.id, status, now, extra);
  let created: CardTransactionRow;
  if (kind === 'clearing') {
    const held = clearableHold(authFacts(auth));
    if (held === undefined) throw new ApiError('state_invalid', `The authorisation is ${auth.status}.`);
    // Without an amount the clearing is for what the authorisation still stands for: its remaining
    // hold, or (a late presentment) what was still held when it expired. The authorised amount
    // would take a part already reversed back onto the card a second time.
    const cleared = requested ?? (held > 0n ? held : await expiredHold(trx, auth));
    // A late presentment (no hold left) moves money only if it has an amount.
    if (held === 0n && cleared <= 0n)
      throw new ApiError('amount_out_of_range', 'A clearing without a hold is more than zero.');
    created = await insertTransaction(trx, card, now, { ...base, type: 'clearing', amount: cleared });
    await post(
      trx,
      card,
      cardMoneyEntryKinds.clearing,
      created.id,
      clearingLines({ memberId: card.member_id, merchantId: card.merchant_id, cardId: card.id, held, cleared }, to),
    );
    await move('cleared', { cleared_amount: cleared });
  } else if (kind === 'reversal') {
    if (auth.status !== 'approved') throw new ApiError('state_invalid', `The authorisation is ${auth.status}.`);
    const r = reversalOf(heldOf(authFacts(auth)), requested);
    if (!r)
      throw new ApiError(
        'amount_out_of_range',
        'A reversal is more than zero and at most what the authorisation still holds.',
      );
    created = await insertTransaction(trx, card, now, {
      ...base,
      type: 'reversal',
      amount: r.amount,
      reversalReason: 'network',
    });
    await post(
      trx,
      card,
      cardMoneyEntryKinds.reversal,
      created.id,
      reversalLines({ memberId: card.member_id, cardId: card.id, amount: r.amount }, to),
    );
    const reversedAmount = minorFromDb(auth.reversed_amount) + r.amount;
    if (r.full) await move('reversed', { reversed_amount: reversedAmount, reversal_reason: 'network' });
    else await updateTransactionAmounts(trx, auth.id, { reversed_amount: reversedAmount, updated_at: now });
  } else {
    if (auth.status !== 'cleared')
      throw new ApiError('state_invalid', `The authorisation is ${auth.status}; only cleared spending is refunded.`);
    const left = minorFromDb(auth.cleared_amount) - minorFromDb(auth.refunded_amount);
    const amount = requested ?? left;
    if (amount <= 0n || amount > left)
      throw new ApiError(
        'amount_out_of_range',
        'A refund is more than zero and at most the cleared amount not yet refunded.',
      );
    created = await insertTransaction(trx, card, now, { ...base, type: 'refund', amount });
    await post(
      trx,
      card,
      cardMoneyEntryKinds.refund,
      created.id,
      refundLines({ memberId: card.member_id, merchantId: card.merchant_id, cardId: card.id, amount }, to),
    );
    await updateTransactionAmounts(trx, auth.id, {
      refunded_amount: minorFromDb(auth.refunded_amount) + amount,
      updated_at: now,
    });
  }
  await emit(trx, created);
  return transactionView(trx, created);
}
