import { PageQuery } from '../../../platform/routes/pagination.js';
import { idParams } from '../../../platform/routes/route-kinds.js';
import { cardList, cardRead, memberWrite, tags, type CardRoute } from '../shared/routes.js';
import { IdParams } from '../shared/schemas.js';
import { createTopUps } from './create.js';
import { CardTopUp, TopUpBody, TopUpParams, TopUpQuote } from './schemas.js';
import { getTopUp, listTopUps, quoteTopUp, rateFor, topUpErrors } from './service.js';

/**
 * Card top-up routes (docs/cards.md "Card money"): the area's index.ts registers them with the transactions' in
 * the order of the OpenAPI document.
 */
export const topUpRoutes = {
  // A member's estimate, neither a write nor a plain read: a POST of scope `cards:read`, without a key.
  quote: (route, { db }) =>
    route.post(
      '/v1/cards/:id/topup-quotes',
      {
        access: { scope: 'cards:read', principal: 'member' },
        errors: topUpErrors.quote,
        schema: {
          operationId: 'createCardTopupQuote',
          summary: 'Quote a card top-up',
          description: [
            'Pure estimate: no lock, no order, no issuer call; nothing is stored. `amount` is the base ' +
              'amount in the source asset; `customer_total` = amount + fee. ',
            "`source_asset` is a preference, silently replaced by the member's payment priority when " +
              "delisted or not in the product's list (the product's source assets in order: the first " +
              'enabled one whose available balance covers the total, else the first enabled one); read ' +
              '`source_asset` in the answer. ',
            'Cross-currency arrival is estimated 1:1; the real rate is fixed at `POST ' +
              '/v1/cards/{id}/topups`. Amounts are smallest-unit integer strings (`ledger_scale`, ' +
              '`card_scale`). ',
            'Refusals: `product_not_available` (product disabled, or no usable source asset), ' +
              '`state_invalid` (card `closing`, `closed`, `expired`, `replaced`), `amount_out_of_range` ' +
              "(below the product's `topup_min` or above its single cap; the reference says 500, extensions " +
              '6), `invalid_request` (malformed amount or too many decimal places).',
          ].join(''),
          tags,
          params: IdParams,
          body: TopUpBody,
          response: { 200: TopUpQuote },
        },
      },
      async ({ principal, params, body }) => quoteTopUp(db, principal, params.id, body),
    ),

  create: (route, ctx) =>
    route.post(
      '/v1/cards/:id/topups',
      memberWrite({
        errors: topUpErrors.create,
        operationId: 'createCardTopup',
        summary: 'Top up a card',
        description: [
          'Signed. Priced as the quote (same source-asset choice, range and fee), at the real rate fixed ' +
            "now (mid less the product's markup; the same currency is 1:1). ",
          'In one transaction the top-up is created `pending` and amount + fee are frozen (available → ' +
            'frozen; `insufficient_balance`); 201 answers it. A background dispatch hands it to the card ' +
            'issuer; ',
          'only when the issuer confirms does the card balance grow (`credited`, webhook ' +
            '`card.topup.credited`); a refusal releases the freeze (`failed`, webhook ' +
            '`card.topup.failed`). ',
          'A timeout or 5xx of the issuer never releases it: the top-up stays `processing` until ' +
            'reconciliation learns the outcome.',
        ].join(''),
        body: TopUpBody,
        response: { 201: CardTopUp },
      }),
      {
        // Read-only before the transaction: the real rate from the one rate service.
        prepare: async ({ principal, params, body }) => ({
          principal,
          cardId: params.id,
          body,
          market: await rateFor(ctx, principal, params.id, body),
        }),
        // The cards locked first, each merchant's write lock at the freezes (create.ts, docs/locking.md).
        commitMany: (trx, plans, mode) => createTopUps(ctx, trx, plans, mode),
        locksRowsFirst: true,
      },
    ),

  list: (route, { db }) =>
    route.get(
      '/v1/cards/:id/topups',
      cardList({
        errors: topUpErrors.get,
        operationId: 'listCardTopups',
        summary: "List a card's top-ups",
        description: 'Newest first (cursor). On behalf of a member, only its own cards.',
        params: IdParams,
        query: PageQuery,
        item: CardTopUp,
      }),
      async ({ principal, params, query }) => listTopUps(db, principal, params.id, query),
    ),

  getById: (route, { db }) =>
    route.get(
      '/v1/cards/topups/:id',
      cardRead({
        errors: topUpErrors.get,
        operationId: 'getCardTopupById',
        summary: 'Get a card top-up by its id',
        description:
          'The same object as `GET /v1/cards/{id}/topups/{topup_id}`, without the card id (a ' +
          '`card.topup.*` event carries only `data.id`). `ctu_` prefix optional. On behalf of a member, ' +
          "only its own; as the merchant, any of its members'.",
        params: idParams({ maxLength: 80, description: 'Top-up id; `ctu_` prefix optional' }),
        response: CardTopUp,
      }),
      async ({ principal, params }) => getTopUp(db, principal, undefined, params.id),
    ),

  getOfCard: (route, { db }) =>
    route.get(
      '/v1/cards/:id/topups/:topup_id',
      cardRead({
        errors: topUpErrors.get,
        operationId: 'getCardTopup',
        summary: 'Get a card top-up',
        description: 'Prefixes optional. On behalf of a member, only its own.',
        params: TopUpParams,
        response: CardTopUp,
      }),
      async ({ principal, params }) => getTopUp(db, principal, params.id, params.topup_id),
    ),
} satisfies Record<string, CardRoute>;
