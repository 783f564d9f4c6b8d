import { Type } from 'typebox';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { idParams } from '../../../platform/routes/route-kinds.js';
import { cardList, cardRead, sandboxCardStep, type CardRoute, type Operation } from '../shared/routes.js';
import { IdParams } from '../shared/schemas.js';
import { AuthorizationAnswer, AuthorizationBody, CardTransaction, FollowBody, TransactionsQuery } from './schemas.js';
import { authorize, getTransaction, listTransactions, transactionErrors } from './service.js';
import { follow, type FollowKind } from './follow.js';

/**
 * Card transaction routes and the sandbox's network messages (docs/cards.md "Card money"): the area's index.ts
 * registers them with the top-ups' in the order of the OpenAPI document.
 */
export const transactionRoutes = {
  getById: (route, { db }) =>
    route.get(
      '/v1/cards/transactions/:id',
      cardRead({
        errors: transactionErrors.get,
        operationId: 'getCardTransaction',
        summary: 'Get a card transaction by its id',
        description:
          'One transaction as `GET /v1/cards/{id}/transactions` lists it, without the card id (a ' +
          '`card.transaction.*` event carries only `data.id`). `ctx_` prefix optional. On behalf of a ' +
          "member, only its own; as the merchant, any of its members'.",
        params: idParams({ maxLength: 80, description: 'Transaction id; `ctx_` prefix optional' }),
        response: CardTransaction,
      }),
      async ({ principal, params }) => getTransaction(db, principal, params.id),
    ),

  list: (route, { db }) =>
    route.get(
      '/v1/cards/:id/transactions',
      cardList({
        errors: transactionErrors.list,
        operationId: 'listCardTransactions',
        summary: "List a card's transactions",
        description:
          'Authorisations (approved or declined, with `decline_reason`), clearings, reversals and ' +
          'refunds, newest first (cursor); optional `type`.',
        params: IdParams,
        query: Type.Object({ ...PageQuery.properties, ...TransactionsQuery.properties }),
        item: CardTransaction,
      }),
      async ({ principal, params, query }) => listTransactions(db, principal, params.id, query),
    ),

  sandboxAuthorization: (route, ctx) =>
    route.post(
      '/v1/sandbox/cards/:id/authorizations',
      sandboxCardStep({
        errors: transactionErrors.authorize,
        operationId: 'createSandboxCardAuthorization',
        summary: 'Sandbox: a card authorisation',
        description: [
          'The card network asks to authorise (extensions 8). Decided in this order: the card is ' +
            "`active`; the currency is the card's; the card's merchant rules (`white`: only listed names " +
            'or MCCs; `black`: none of them; names trimmed, case-insensitive); ',
          "the single, daily and monthly limits (the member's card-level limits, then the product's " +
            "caps; days and months on the merchant's clock, UTC; approved authorisations count what they " +
            'still hold, cleared ones what cleared); the card balance. ',
          'Approved: the amount is held (card → held) until cleared, reversed, or `expires_at` (7 days; ' +
            '30 for lodging, vehicle rental and cruise MCCs; merchant clock). Always recorded as a ' +
            'transaction with its decline reason. ',
          "Another currency than the card's is declined `currency_not_supported` (no conversion: see " +
            'docs/cards.md).',
        ].join(''),
        body: AuthorizationBody,
        response: { 200: AuthorizationAnswer },
      }),
      async ({ principal, params, body, write }) => write((trx) => authorize(ctx, trx, principal, params.id, body)),
    ),

  sandboxClearing: networkFollowUp('clearing', '/v1/sandbox/cards/:id/clearings', {
    operationId: 'createSandboxCardClearing',
    summary: 'Sandbox: the network clears an authorisation',
    description:
      'Of an `approved` authorisation; `amount` defaults to what the authorisation still holds ' +
      '(after a partial reversal, not the reversed part again; for a late presentment, what was held ' +
      'when it expired) and may differ: less than what is still held releases the rest of the hold ' +
      'to the card, more takes the difference from the card balance (`insufficient_balance` when it ' +
      'is short). The money leaves to the card network. The authorisation becomes `cleared` and ' +
      'counts the cleared amount against the limits. A late presentment of an authorisation whose ' +
      'hold expired (`reversed`, `reversal_reason: expired`) still clears, all from the card balance.',
  }),

  sandboxReversal: networkFollowUp('reversal', '/v1/sandbox/cards/:id/reversals', {
    operationId: 'createSandboxCardReversal',
    summary: 'Sandbox: the network reverses an authorisation',
    description:
      'Of an `approved` (not cleared) authorisation: `amount` (default: all that is still held) of ' +
      'the hold goes back to the card balance (more than zero, at most the hold: ' +
      '`amount_out_of_range`). The whole hold: the authorisation becomes `reversed` and no longer ' +
      'counts against the limits; part of it: it stays `approved` and counts only what it still ' +
      'holds.',
  }),

  sandboxRefund: networkFollowUp('refund', '/v1/sandbox/cards/:id/refunds', {
    operationId: 'createSandboxCardRefund',
    summary: 'Sandbox: the network refunds cleared spending',
    description:
      'Of a `cleared` authorisation: `amount` (default: all that is left) back onto the card; at ' +
      'most the cleared amount less earlier refunds (`amount_out_of_range`).',
  }),
} satisfies Record<string, CardRoute>;

/**
 * The sandbox's follow-up of an authorisation by the network (clearing, reversal, refund), `kind`, at `path`: the
 * transaction it records.
 */
function networkFollowUp(kind: FollowKind, path: string, operation: Operation): CardRoute {
  const def = sandboxCardStep({
    errors: transactionErrors.follow,
    ...operation,
    body: FollowBody,
    response: { 200: CardTransaction },
  });
  return (route, ctx) =>
    route.post(path, def, async ({ principal, params, body, write }) =>
      write((trx) => follow(ctx, trx, principal, params.id, kind, body)),
    );
}
