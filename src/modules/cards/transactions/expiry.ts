/** The expiry of authorisation holds (docs/cards.md "Transactions"): the timed process `card.authorization_expiry`. */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { reversalLines, cardMoneyEntryKinds } from '../../../money/index.js';
import { authorizationExpired, heldOf } from './rules.js';
import type { ClockScope } from '../../../platform/clock.js';
import { lockCardById } from '../cards/queries.js';
import { expiredAuthorizations, lockTransaction, moveAuthorization } from './queries.js';
import { authFacts, emit, insertTransaction, post, returnsTo } from './records.js';
/** Authorisations expired per run of the timed process (a bound on one batch). */
const expiryBatchMax = 100;
/** Batches per run (a bound: what is left is taken by the next run). */
const expiryBatchesPerRunMax = 20;

/**
 * Releases the holds of the scope's authorisations neither cleared nor reversed by their
 * `expires_at` (merchant clock): each in its own transaction, card row locked first (as every
 * message and stopping action), the authorisation locked and checked again (`authorizationExpired`:
 * a clearing or reversal that won the race leaves nothing to do). What is still held goes back
 * (`card.auth_expiry`, keyed by the authorisation: once) onto the card, or to available when the
 * card stopped; a `reversal` row (`reversal_reason: expired`, `posted`) records it with its
 * `card.transaction.reversal` event; the authorisation becomes `reversed` (ours: the reference has
 * no card transaction states) and no longer counts against the limits.
 */
export async function expireAuthorizations(ctx: ServiceContext, scope: ClockScope, now: Date): Promise<number> {
  let expired = 0;
  for (let batch = 0; batch < expiryBatchesPerRunMax; batch++) {
    const due = await expiredAuthorizations(ctx.db, scope, now, expiryBatchMax);
    for (const { id, card_id: cardId } of due) {
      if (await ctx.db.transaction().execute((trx) => expireOne(trx, cardId, id, now))) expired++;
    }
    if (due.length < expiryBatchMax) break;
  }
  return expired;
}

async function expireOne(trx: Transaction<Database>, cardId: string, authId: string, now: Date): Promise<boolean> {
  const card = await lockCardById(trx, cardId);
  const auth = await lockTransaction(trx, authId);
  if (
    !authorizationExpired(
      { status: auth.status, expiresAt: auth.expires_at === null ? null : new Date(auth.expires_at) },
      now,
    )
  )
    return false;
  const held = heldOf(authFacts(auth));
  const to = returnsTo(card);
  const created = await insertTransaction(trx, card, now, {
    type: 'reversal',
    status: 'posted',
    amount: held,
    currency: card.currency,
    merchantName: auth.merchant_name,
    mcc: auth.mcc,
    authorizationId: auth.id,
    networkRef: `expiry:${auth.id}`,
    reversalReason: 'expired',
  });
  if (held > 0n)
    await post(
      trx,
      card,
      cardMoneyEntryKinds.authExpiry,
      auth.id,
      reversalLines({ memberId: card.member_id, cardId: card.id, amount: held }, to),
    );
  await moveAuthorization(trx, auth.id, 'reversed', now, { reversed_amount: auth.amount, reversal_reason: 'expired' });
  await emit(trx, created);
  return true;
}
