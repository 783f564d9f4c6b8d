// Over 300 lines: the network's messages (authorise, clear, reverse, refund) share the card lock and posting
/**
 * Card transactions (docs/cards.md "Card money"): messages of the card network about a card,
 * decided and posted by the service. An authorisation is decided by the pure
 * `decideAuthorization` (card status, currency, merchant rules, limits at the card and product
 * layers by the merchant's clock, the card balance) with the card row locked, so concurrent
 * authorisations count against the limits and the balance one by one; approved, it holds the
 * amount (card → card_held). A clearing sends the held money to the network, a reversal gives the
 * hold back, a refund pays cleared money back onto the card. Each money movement is one ledger
 * entry, written with its transaction row and its event in one transaction.
 */
import type { Transaction, Updateable } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { type PageParams } from '../../../platform/pagination.js';
import { keysetPage } from '../../../db/keyset-page.js';
import {
  accountBalance,
  minorFromDb,
  parseAmount,
  postEntry,
  type EntryLine,
  authHoldLines,
  clearingLines,
  refundLines,
  reversalLines,
  cardMoneyEntryKinds,
} from '../../../money/index.js';
import { recordEvent } from '../../../events/index.js';
import type { CardNetworkMessage } from '../../../upstreams/card/port.js';
import {
  authorizationExpiresAt,
  cardTransactionReferenceType,
  clearableHold,
  decideAuthorization,
  effectiveLimits,
  heldOf,
  limitCounted,
  reversalOf,
  type AuthorizationDecision,
  type RuleSet,
} from './rules.js';
import type { CardReversalReason, CardTransactionRow, CardTransactionType, CardTransactionsTable } from './tables.js';
import {
  authorizationsSince,
  expiryReversalOf,
  findTransaction,
  insertTransactionRow,
  lockTransactionOfCard,
  moveAuthorization,
  transactionsOfCard,
  updateTransactionAmounts,
} from './queries.js';
import { productRowBySeq } from '../products/queries.js';
import { merchantRulesOfCard } from '../controls/queries.js';
import { transactionView } from './views.js';
import { externalIdOf, scaleOf, type CardCaller, type Db } from '../shared/queries.js';
import { findCard, lockCardById } from '../cards/queries.js';
import type { CardRow } from '../cards/tables.js';
import { cardStopped } from '../cards/state.js';

export const transactionErrors = {
  authorize: ['not_found', 'invalid_request'],
  follow: ['not_found', 'invalid_request', 'state_invalid', 'amount_out_of_range', 'insufficient_balance'],
  list: ['not_found'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

export interface AuthorizationBody {
  amount: string;
  currency?: string;
  merchant_name: string;
  mcc: string;
}

/** `GET /v1/cards/{id}/transactions`: the card's transactions, newest first (cursor). */
export async function listTransactions(
  db: Db,
  caller: CardCaller,
  cardId: string,
  page: PageParams & { type?: CardTransactionType },
) {
  const card = await findCard(db, caller, cardId);
  if (!card) throw new ApiError('not_found', 'No such card.');
  const rows = await keysetPage(transactionsOfCard(db, card.id, page.type), page);
  const data = [];
  for (const row of rows.data) data.push(await transactionView(db, row));
  return { ...rows, data };
}

/** `GET /v1/cards/transactions/{id}`: one transaction by its id alone (events carry no card id); another member's, or
 * none: not_found. */
export async function getTransaction(db: Db, caller: CardCaller, id: string) {
  const row = await findTransaction(db, caller, id);
  if (!row) throw new ApiError('not_found', 'No such card transaction.');
  return transactionView(db, row);
}

const cardAccount = (card: CardRow, bucket: 'card' | 'card_held') => ({
  owner: 'member' as const,
  memberId: card.member_id,
  bucket,
  cardId: card.id,
});

export async function emit(trx: Transaction<Database>, row: CardTransactionRow): Promise<void> {
  await recordEvent(trx, {
    merchantId: row.merchant_id,
    environment: row.environment,
    type: `card.transaction.${row.type}`,
    object: 'card_transaction',
    objectId: row.id,
    externalMemberId: await externalIdOf(trx, row.member_id),
    status: row.status,
    statusVersion: row.status_version,
  });
}

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

/** The start of the UTC day and month of `now` (the merchant's clock). */
export function periodStarts(now: Date): { day: Date; month: Date } {
  return {
    day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}

/**
 * What counts against the limits since `since`: each authorisation approved or cleared since then
 * at what it really holds or spent (`limitCounted`: the remaining hold, or the cleared amount);
 * reversed and expired ones count nothing.
 */
async function spentSince(trx: Transaction<Database>, cardId: string, since: Date): Promise<bigint> {
  const rows = await authorizationsSince(trx, cardId, since);
  let total = 0n;
  for (const r of rows) {
    total += limitCounted({
      status: r.status,
      amount: minorFromDb(r.amount),
      clearedAmount: minorFromDb(r.cleared_amount),
      reversedAmount: minorFromDb(r.reversed_amount),
    });
  }
  return total;
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

function networkOf(ctx: ServiceContext) {
  const send = ctx.upstreams.card.sandboxNetworkMessage;
  if (!send) throw new ApiError('not_found');
  return (card: CardRow, m: Omit<CardNetworkMessage, 'cardRef'>) =>
    send.call(
      ctx.upstreams.card,
      { merchantId: card.merchant_id, environment: card.environment },
      { ...m, cardRef: card.upstream_ref },
    );
}

async function merchantCard(db: Db, caller: CardCaller, id: string): Promise<CardRow> {
  const card = await findCard(db, caller, id);
  if (!card) throw new ApiError('not_found', 'No such card.');
  return card;
}

/**
 * Sandbox `POST /v1/sandbox/cards/{id}/authorizations` (extensions 8): the card network asks to
 * authorise; the service decides with the card locked and records the transaction, approved or
 * declined with its reason, in the caller's transaction (the idempotency key's: a retry replays
 * the decision). The simulated network's message is in memory only, so asking it inside the
 * transaction holds no lock on anything outside it. Answers `{approved, decline_reason?, transaction_id}`.
 */
export async function authorize(
  ctx: ServiceContext,
  trx: Transaction<Database>,
  caller: CardCaller,
  id: string,
  body: AuthorizationBody,
): Promise<{ approved: boolean; decline_reason?: string; transaction_id: string }> {
  const card0 = await merchantCard(trx, caller, id);
  const cardScale = await scaleOf(trx, card0.currency);
  const currency = (body.currency ?? card0.currency).toUpperCase();
  // The amount is in the message's currency (`CardNetworkMessage`), read at that currency's scale
  // as `transactionView` shows it; a currency outside the catalogue is read at the card's. Read at
  // the card's scale, "10.50 USDT" was stored as 1050 and shown as 0.001050.
  const amountScale = currency === card0.currency ? cardScale : await scaleOf(trx, currency).catch(() => cardScale);
  const amount = parseAmount(body.amount, amountScale);
  const merchantName = body.merchant_name.trim();
  if (merchantName === '') throw new ApiError('invalid_request', 'merchant_name must not be empty.');
  const { networkRef } = await networkOf(ctx)(card0, {
    type: 'authorization',
    amountMinor: amount,
    currency,
    merchantName,
    mcc: body.mcc,
  });
  const card = await lockCardById(trx, card0.id);
  const product = await productRowBySeq(trx, card.product_seq);
  const stored = await merchantRulesOfCard(trx, card.id);
  const rules: RuleSet | null = stored?.rule_type
    ? { ruleType: stored.rule_type, merchantNames: stored.merchant_names, mccList: stored.mcc_list }
    : null;
  const now = await ctx.clock.now(trx, caller);
  const { day, month } = periodStarts(now);
  const decision: AuthorizationDecision = decideAuthorization({
    cardStatus: card.status,
    cardFrozenAt: card.frozen_at,
    cardCurrency: card.currency,
    amount,
    currency,
    merchantName,
    mcc: body.mcc,
    rules,
    cardLimits: effectiveLimits(
      {
        single: minorFromDb(card.limit_single),
        daily: minorFromDb(card.limit_daily),
        monthly: minorFromDb(card.limit_monthly),
      },
      {
        single: minorFromDb(card.confirmed_single),
        daily: minorFromDb(card.confirmed_daily),
        monthly: minorFromDb(card.confirmed_monthly),
      },
    ),
    productLimits: {
      single: minorFromDb(product.max_single),
      daily: minorFromDb(product.max_daily),
      monthly: minorFromDb(product.max_monthly),
    },
    spentToday: await spentSince(trx, card.id, day),
    spentThisMonth: await spentSince(trx, card.id, month),
    balance: await accountBalance(trx, card.environment, cardAccount(card, 'card'), card.currency),
  });
  const row = await insertTransaction(trx, card, now, {
    type: 'authorization',
    status: decision.approved ? 'approved' : 'declined',
    amount,
    currency,
    merchantName,
    mcc: body.mcc,
    declineReason: decision.approved ? undefined : decision.reason,
    networkRef,
    // The hold is released if the network neither clears nor reverses it by then (`expireAuthorizations`).
    expiresAt: decision.approved ? authorizationExpiresAt(now, body.mcc) : undefined,
  });
  if (decision.approved)
    await post(
      trx,
      card,
      cardMoneyEntryKinds.authHold,
      row.id,
      authHoldLines({ memberId: card.member_id, cardId: card.id, amount }),
    );
  await emit(trx, row);
  return decision.approved
    ? { approved: true, transaction_id: row.id }
    : { approved: false, decline_reason: decision.reason, transaction_id: row.id };
}

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

type FollowKind = 'clearing' | 'reversal' | 'refund';

/** What an expired authorisation still held when its hold expired (its `expired` reversal), the authorised amount if
 * none is recorded. */
async function expiredHold(trx: Transaction<Database>, auth: CardTransactionRow): Promise<bigint> {
  const released = await expiryReversalOf(trx, auth.card_id, auth.id);
  return released ? minorFromDb(released.amount) : minorFromDb(auth.amount);
}

export const authFacts = (a: CardTransactionRow) => ({
  status: a.status,
  amount: minorFromDb(a.amount),
  reversedAmount: minorFromDb(a.reversed_amount),
  reversalReason: a.reversal_reason,
});

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
  const scale = await scaleOf(trx, found.currency);
  const requested = body.amount === undefined ? undefined : parseAmount(body.amount, scale);
  // The card row locked first (as the authorisation and every stopping action lock it): a card
  // stopping meanwhile either returned its balance before this money arrives (then it goes to
  // available) or returns it after (then this money is on the card and goes back with it).
  const card = await lockCardById(trx, found.id);
  const to = cardStopped({ status: card.status, frozenAt: card.frozen_at })
    ? ('available' as const)
    : ('card' as const);
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
