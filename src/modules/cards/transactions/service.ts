/**
 * Card transactions (docs/cards.md "Card money"): messages of the card network about a card,
 * decided and posted by the service, and their reads. An authorisation is decided by the pure
 * `decideAuthorization` (card status, currency, merchant rules, limits at the card and product
 * layers by the merchant's clock, the card balance) with the card row locked, so concurrent
 * authorisations count against the limits and the balance one by one; approved, it holds the
 * amount (card → card_held). The network's follow-ups (clearing, reversal, refund) are follow.ts.
 * Each money movement is one ledger entry, written with its transaction row and its event in one
 * transaction (records.ts).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, type ErrorCode } from '../../../platform/errors.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { keysetPage, viewPage } from '../../../db/keyset-page.js';
import { accountBalance, minorFromDb, parseAmount, authHoldLines, cardMoneyEntryKinds } from '../../../money/index.js';
import {
  authorizationExpiresAt,
  decideAuthorization,
  effectiveLimits,
  limitCounted,
  type AuthorizationDecision,
  type RuleSet,
} from './rules.js';
import type { CardTransactionType } from './tables.js';
import { authorizationsSince, findTransaction, transactionsOfCard } from './queries.js';
import { productRowBySeq } from '../products/queries.js';
import { merchantRulesOfCard } from '../controls/queries.js';
import { transactionView } from './views.js';
import { type CardCaller, type Db } from '../shared/queries.js';
import { cardOrNotFound, lockCardById } from '../cards/queries.js';
import type { CardRow } from '../cards/tables.js';
import { emit, insertTransaction, merchantCard, networkOf, post } from './records.js';
import { assetScale } from '../../assets/index.js';

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
  const card = await cardOrNotFound(db, caller, cardId);
  return viewPage(await keysetPage(transactionsOfCard(db, card.id, page.type), page), (row) =>
    transactionView(db, row),
  );
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
  const cardScale = await assetScale(trx, card0.currency);
  const currency = (body.currency ?? card0.currency).toUpperCase();
  // The amount is in the message's currency (`CardNetworkMessage`), read at that currency's scale
  // as `transactionView` shows it; a currency outside the catalogue is read at the card's. Read at
  // the card's scale, "10.50 USDT" was stored as 1050 and shown as 0.001050.
  const amountScale = currency === card0.currency ? cardScale : await assetScale(trx, currency).catch(() => cardScale);
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
