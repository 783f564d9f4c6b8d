import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { router } from '../../platform/route.js';
import { AuthorizationAnswer, AuthorizationBody, CardTopUp, CardTransaction, FollowBody, TopUpBody, TopUpParams, TopUpQuote, TransactionsQuery } from './money-schemas.js';
import { IdParams } from './schemas.js';
import { createTopUp, getTopUp, listTopUps, quoteTopUp, rateFor, topUpErrors } from './topups.js';
import { authorize, follow, getTransaction, listTransactions, transactionErrors } from './transactions.js';

const tags = ['Cards'];

/** Card issuing II, the money side (docs/cards.md "Card money"): top-up quotes and top-ups, transactions and their sandbox helpers. */
export async function cardMoneyRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = router(app, ctx);

  route.post('/v1/cards/:id/topup-quotes', {
    access: { scope: 'cards:read', principal: 'member' },
    errors: [...topUpErrors.quote],
    schema: {
      operationId: 'createCardTopupQuote',
      summary: 'Quote a card top-up',
      description: [
        'Pure estimate: no lock, no order, no issuer call; nothing is stored. `amount` is the base amount in the source asset; `customer_total` = amount + fee. ',
        '`source_asset` is a preference, silently replaced by the member\'s payment priority when delisted or not in the product\'s list (the product\'s source assets in order: the first enabled one whose available balance covers the total, else the first enabled one); read `source_asset` in the answer. ',
        'Cross-currency arrival is estimated 1:1; the real rate is fixed at `POST /v1/cards/{id}/topups`. Amounts are smallest-unit integer strings (`ledger_scale`, `card_scale`). ',
        'Refusals: `product_not_available` (product disabled, or no usable source asset), `state_invalid` (card `closing`, `closed`, `expired`, `replaced`), `amount_out_of_range` (below the product\'s `topup_min` or above its single cap; the reference says 500, extensions 6), `invalid_request` (malformed amount or too many decimal places).',
      ].join(''),
      tags, params: IdParams, body: TopUpBody, response: { 200: TopUpQuote },
    },
  }, async ({ principal, params, body }) => quoteTopUp(db, principal, params.id, body));

  route.post('/v1/cards/:id/topups', {
    access: { scope: 'cards:write', principal: 'member', idempotency: 'required' },
    errors: [...topUpErrors.create],
    schema: {
      operationId: 'createCardTopup',
      summary: 'Top up a card',
      description: [
        'Signed. Priced as the quote (same source-asset choice, range and fee), at the real rate fixed now (mid less the product\'s markup; the same currency is 1:1). ',
        'In one transaction the top-up is created `pending` and amount + fee are frozen (available → frozen; `insufficient_balance`); 201 answers it. A background dispatch hands it to the card issuer; ',
        'only when the issuer confirms does the card balance grow (`credited`, webhook `card.topup.credited`); a refusal releases the freeze (`failed`, webhook `card.topup.failed`). ',
        'A timeout or 5xx of the issuer never releases it: the top-up stays `processing` until reconciliation learns the outcome.',
      ].join(''),
      tags, params: IdParams, body: TopUpBody, response: { 201: CardTopUp },
    },
  }, {
    // Read-only before the transaction: the real rate from the one rate service.
    prepare: async ({ principal, params, body }) => ({ principal, cardId: params.id, body, market: await rateFor(ctx, principal, params.id, body) }),
    commit: (trx, { principal, cardId, body, market }) => createTopUp(ctx, trx, principal, cardId, body, market),
  });

  route.get('/v1/cards/:id/topups', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...topUpErrors.get],
    schema: { operationId: 'listCardTopups', summary: 'List a card\'s top-ups', description: 'Newest first (cursor). On behalf of a member, only its own cards.', tags, params: IdParams, querystring: PageQuery, response: { 200: listEnvelope(CardTopUp) } },
  }, async ({ principal, params, query }) => listTopUps(db, principal, params.id, query));

  route.get('/v1/cards/topups/:id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...topUpErrors.get],
    schema: {
      operationId: 'getCardTopupById',
      summary: 'Get a card top-up by its id',
      description: 'The same object as `GET /v1/cards/{id}/topups/{topup_id}`, without the card id (a `card.topup.*` event carries only `data.id`). `ctu_` prefix optional. On behalf of a member, only its own; as the merchant, any of its members\'.',
      tags, params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 80, description: 'Top-up id; `ctu_` prefix optional' }) }), response: { 200: CardTopUp },
    },
  }, async ({ principal, params }) => getTopUp(db, principal, undefined, params.id));

  route.get('/v1/cards/transactions/:id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...transactionErrors.get],
    schema: {
      operationId: 'getCardTransaction',
      summary: 'Get a card transaction by its id',
      description: 'One transaction as `GET /v1/cards/{id}/transactions` lists it, without the card id (a `card.transaction.*` event carries only `data.id`). `ctx_` prefix optional. On behalf of a member, only its own; as the merchant, any of its members\'.',
      tags, params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 80, description: 'Transaction id; `ctx_` prefix optional' }) }), response: { 200: CardTransaction },
    },
  }, async ({ principal, params }) => getTransaction(db, principal, params.id));

  route.get('/v1/cards/:id/topups/:topup_id', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...topUpErrors.get],
    schema: { operationId: 'getCardTopup', summary: 'Get a card top-up', description: 'Prefixes optional. On behalf of a member, only its own.', tags, params: TopUpParams, response: { 200: CardTopUp } },
  }, async ({ principal, params }) => getTopUp(db, principal, params.id, params.topup_id));

  route.get('/v1/cards/:id/transactions', {
    access: { scope: 'cards:read', principal: 'either' },
    errors: [...transactionErrors.list],
    schema: {
      operationId: 'listCardTransactions',
      summary: 'List a card\'s transactions',
      description: 'Authorisations (approved or declined, with `decline_reason`), clearings, reversals and refunds, newest first (cursor); optional `type`.',
      tags, params: IdParams, querystring: Type.Object({ ...PageQuery.properties, ...TransactionsQuery.properties }), response: { 200: listEnvelope(CardTransaction) },
    },
  }, async ({ principal, params, query }) => listTransactions(db, principal, params.id, query));

  const sandbox = { scope: 'merchant:read', principal: 'merchant', idempotency: 'required', sandboxOnly: true } as const;

  route.post('/v1/sandbox/cards/:id/authorizations', {
    access: sandbox,
    errors: [...transactionErrors.authorize],
    schema: {
      operationId: 'createSandboxCardAuthorization',
      summary: 'Sandbox: a card authorisation',
      description: [
        'The card network asks to authorise (extensions 8). Decided in this order: the card is `active`; the currency is the card\'s; the card\'s merchant rules (`white`: only listed names or MCCs; `black`: none of them; names trimmed, case-insensitive); ',
        'the single, daily and monthly limits (the member\'s card-level limits, then the product\'s caps; days and months on the merchant\'s clock, UTC; approved authorisations count what they still hold, cleared ones what cleared); the card balance. ',
        'Approved: the amount is held (card → held) until cleared, reversed, or `expires_at` (7 days; 30 for lodging, vehicle rental and cruise MCCs; merchant clock). Always recorded as a transaction with its decline reason. ',
        'Another currency than the card\'s is declined `currency_not_supported` (no conversion: see docs/cards.md).',
      ].join(''),
      tags: ['Sandbox'], params: IdParams, body: AuthorizationBody, response: { 200: AuthorizationAnswer },
    },
  }, async ({ principal, params, body, write }) => write((trx) => authorize(ctx, trx, principal, params.id, body)));

  route.post('/v1/sandbox/cards/:id/clearings', {
    access: sandbox,
    errors: [...transactionErrors.follow],
    schema: {
      operationId: 'createSandboxCardClearing',
      summary: 'Sandbox: the network clears an authorisation',
      description: 'Of an `approved` authorisation; `amount` defaults to what the authorisation still holds (after a partial reversal, not the reversed part again; for a late presentment, what was held when it expired) and may differ: less than what is still held releases the rest of the hold to the card, more takes the difference from the card balance (`insufficient_balance` when it is short). The money leaves to the card network. The authorisation becomes `cleared` and counts the cleared amount against the limits. A late presentment of an authorisation whose hold expired (`reversed`, `reversal_reason: expired`) still clears, all from the card balance.',
      tags: ['Sandbox'], params: IdParams, body: FollowBody, response: { 200: CardTransaction },
    },
  }, async ({ principal, params, body, write }) => write((trx) => follow(ctx, trx, principal, params.id, 'clearing', body)));

  route.post('/v1/sandbox/cards/:id/reversals', {
    access: sandbox,
    errors: [...transactionErrors.follow],
    schema: {
      operationId: 'createSandboxCardReversal',
      summary: 'Sandbox: the network reverses an authorisation',
      description: 'Of an `approved` (not cleared) authorisation: `amount` (default: all that is still held) of the hold goes back to the card balance (more than zero, at most the hold: `amount_out_of_range`). The whole hold: the authorisation becomes `reversed` and no longer counts against the limits; part of it: it stays `approved` and counts only what it still holds.',
      tags: ['Sandbox'], params: IdParams, body: FollowBody, response: { 200: CardTransaction },
    },
  }, async ({ principal, params, body, write }) => write((trx) => follow(ctx, trx, principal, params.id, 'reversal', body)));

  route.post('/v1/sandbox/cards/:id/refunds', {
    access: sandbox,
    errors: [...transactionErrors.follow],
    schema: {
      operationId: 'createSandboxCardRefund',
      summary: 'Sandbox: the network refunds cleared spending',
      description: 'Of a `cleared` authorisation: `amount` (default: all that is left) back onto the card; at most the cleared amount less earlier refunds (`amount_out_of_range`).',
      tags: ['Sandbox'], params: IdParams, body: FollowBody, response: { 200: CardTransaction },
    },
  }, async ({ principal, params, body, write }) => write((trx) => follow(ctx, trx, principal, params.id, 'refund', body)));
}
