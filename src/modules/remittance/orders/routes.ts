import {
  memberSeesOwnOnly,
  memberWrite,
  readList,
  readOne,
  sandboxStep,
  statusPageQuery,
} from '../../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../../platform/routes/route-module.js';
import { conversionDateErrors, conversionDates } from './conversion-dates.js';
import { simulateReturn } from './reconcile.js';
import {
  ConversionDatesQuery,
  ConversionDatesResponse,
  Remittance,
  RemittanceBody,
  RemittanceIdParams,
} from './schemas.js';
import { createOrders } from './create.js';
import { getOrder, listOrders, marketFor, orderErrors, viewOf } from './service.js';
import { publicStatuses } from './state.js';

const tags = ['Remittance'];

/** The payout currency's settlement days, remittance orders (extensions 10) and their sandbox helper. */
export const orderRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/v1/remit/conversion-dates',
    {
      access: { scope: 'remittances:read', principal: 'merchant' },
      errors: conversionDateErrors,
      schema: {
        operationId: 'getConversionDates',
        summary: 'Settlement days of the coming week for a payout currency',
        description: [
          "The provider's settlement days, forwarded without local calculation (weekends and the settlement " +
            "systems' holidays are not valid; today is valid only before the line's cut-off). ",
          "An order's actual date is its `payout_date`. When `same_currency` is true `dates` may be empty: " +
            'that does not mean the corridor is closed. ',
          '`line`: `express` (default) or `pobo`; any other value is treated as `express`. ',
          'Errors: `invalid_request` (currency missing or not three upper-case letters), ' +
            '`product_not_available` (the line does not serve the currency), `service_unavailable` (no ' +
            'settlement currency configured for the line), 502 `upstream_error` (the provider cannot be asked: ' +
            'never an empty list; retry).',
        ].join(''),
        tags,
        querystring: ConversionDatesQuery,
        response: { 200: ConversionDatesResponse },
      },
    },
    async ({ principal, query }) => conversionDates(ctx, principal, query),
  );

  route.post(
    '/v1/remittances',
    memberWrite({
      scope: 'remittances:write',
      errors: orderErrors.create,
      operationId: 'createRemittance',
      summary: 'Send money to a payee',
      description: [
        "Creates a remittance order to one of the member's payees and freezes `source_amount` + `fee` " +
          '(available → frozen) in the same transaction; the answer is `pending`. ',
        'The provider is called by a background dispatch (payee registration, then the payout); follow the ' +
          'order by `remittance.order.*` webhooks (`pending`, `processing`, `completed`, `failed`, ' +
          '`returned`, with `status_version`) or `GET /v1/remittances/{id}`. ',
        "When `source_asset` differs from the payee's currency the amount is converted by the one rate " +
          "service: the rate is mid less the corridor's spread, rounded down; the payout is rounded down and " +
          'the fee up. ',
        "Refusals: `resource_not_found` (not the member's payee), `kyc_required` (below the corridor's KYC " +
          'level), `corridor_not_supported` (the corridor was disabled or restricted since), ' +
          '`asset_not_allowed` (no such asset, disabled, or no rate to the payout currency), ',
        '`amount_out_of_range` (payout below the corridor minimum), `limit_exceeded` with `limit_type` ' +
          '(`single`, `daily`) and `limit_scope` (`member`, `merchant`), `insufficient_balance` (amount plus ' +
          'fee). ',
        'A provider timeout is never refunded: the order stays `processing` until reconciliation learns the outcome.',
      ].join(''),
      tags,
      body: RemittanceBody,
      response: { 201: Remittance },
    }),
    {
      // Read-only provider calls before the transaction: the rate and the provider's payout date.
      prepare: async ({ principal, body }) => ({ principal, body, market: await marketFor(ctx, principal, body) }),
      // Many orders at once (create.ts): a batch's look-ups, freezes and rows in a few statements.
      commitMany: (trx, plans, mode) => createOrders(ctx, trx, plans, mode),
    },
  );

  route.get(
    '/v1/remittances',
    readList({
      scope: 'remittances:read',
      operationId: 'listRemittances',
      summary: 'List remittances',
      description:
        "On behalf of a member: that member's orders; as the merchant: all of them. Newest first; optional `status`.",
      tags,
      query: statusPageQuery(publicStatuses, { description: publicStatuses.join(', ') }),
      item: Remittance,
    }),
    async ({ principal, query }) => listOrders(db, principal, query),
  );

  route.get(
    '/v1/remittances/:id',
    readOne({
      scope: 'remittances:read',
      errors: orderErrors.get,
      operationId: 'getRemittance',
      summary: 'Get a remittance',
      description: memberSeesOwnOnly,
      tags,
      params: RemittanceIdParams,
      response: Remittance,
    }),
    async ({ principal, params }) => getOrder(db, principal, params.id),
  );

  route.post(
    '/v1/sandbox/remittances/:id/return',
    {
      access: sandboxStep,
      errors: ['not_found', 'state_invalid'],
      schema: {
        operationId: 'returnSandboxRemittance',
        summary: 'Sandbox: the beneficiary bank returns a completed payout',
        description:
          'Test helper (sandbox only): the simulated provider marks the payout returned; the service learns ' +
          'it from the provider as in production: the order becomes `returned` and its amount goes back to ' +
          "the member's available balance (the fee is kept). A completed order only; a repeat answers the " +
          'returned order.',
        tags: ['Sandbox'],
        params: RemittanceIdParams,
        response: { 200: Remittance },
      },
    },
    async ({ principal, params, once }) =>
      once(async () => viewOf(db, await simulateReturn(ctx, principal, params.id))),
  );
});
