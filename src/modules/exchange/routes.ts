import { constantList } from '../../platform/routes/pagination.js';
import { memberWrite, merchantWrite, readList, readOne, statusPageQuery } from '../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { eachAlone } from '../../platform/writes/batch-answers.js';
import { stepUpCall } from '../step-up/index.js';
import { conversionErrors, createConversion, refuseQuoteId, type ConversionPlan } from './conversions.js';
import { conversionPairs } from './directions.js';
import { askRate } from './pricing.js';
import { readOrder, readOrders } from './reads.js';
import { exchangeErrors, lockedQuote, readOnlyQuote } from './service.js';
import { executeOrders } from './market-orders.js';
import { executeRequestOf, lockOf, sidesOf } from './requests.js';
import { quoteRequestIdentity } from './rules.js';
import {
  Conversion,
  ConversionBody,
  ConversionPair,
  ExchangeOrder,
  IdParams,
  OrderBody,
  Quote,
  QuoteBody,
  tags,
} from './schemas.js';

/** Member exchange (reference: `POST /v1/exchange/quotes`; extensions 10) and merchant conversions. */
export const exchangeRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.post(
    '/v1/exchange/quotes',
    {
      access: {
        scope: 'exchange:write',
        principal: 'member',
        idempotency: 'optional',
        // The reference: the key is "meaningful only with lock: true". A read-only quote is priced
        // anew on every call, key or not: never a replayed (stale) price or refusal.
        keyedBody: {
          applies: (body) => (body as { lock?: unknown } | null)?.lock === true,
          description:
            'Read only with `lock: true`: a quote without a lock is priced anew on every call (the key is not kept).',
        },
        // "The same key, direction and amount return the same locked quote": asset case and a zero
        // tail of the amount do not make another request.
        canonicalBody: quoteRequestIdentity,
      },
      errors: exchangeErrors.quote,
      schema: {
        operationId: 'createExchangeQuote',
        summary: 'Quote an exchange (read-only or locked)',
        description: [
          'Without `lock`: read-only, nothing stored, no `quote_id`; execution later re-prices. ',
          'With `lock: true`: an exchange order in state `quoted` (`quote_id` = its id) whose numbers `POST ' +
            '/v1/exchange/orders` executes until `quote_expires_at`; afterwards it becomes `expired` (no money ' +
            'moves) and execution is refused, never re-priced. ',
          'With `lock: true` the same idempotency key with the same direction and amount returns the same ' +
            'locked quote (asset codes in any case, the amount with or without a zero tail); without a lock ' +
            'the key is not read (every read-only quote is priced anew). ',
          'Refusals (4xx, where the reference answers 500 `api_error`; docs/compatibility.md): ' +
            '`invalid_request` (unknown asset, same asset both sides, bad amount), `invalid_fields` (`lock` ' +
            'not a JSON boolean), ',
          '`asset_not_allowed` (asset disabled), `service_unavailable` (direction switched off, rate ' +
            'unavailable or stale), `kyc_required`, `amount_out_of_range` (below minimum, above single cap, ' +
            'fee consumes the amount), ',
          "`limit_exceeded` with `limit_type: daily`, `limit_scope: member` (the member's daily amount or " +
            "count in the direction, on the merchant's day).",
        ].join(''),
        tags,
        body: QuoteBody,
        response: { 200: Quote },
      },
    },
    async ({ principal, body, write }) => {
      const lock = lockOf(body);
      const sides = sidesOf(body);
      const rate = await askRate(ctx, principal, sides.from, sides.to);
      if (!lock) return readOnlyQuote(ctx, principal, body, rate);
      return write((trx) => lockedQuote(ctx, trx, principal, body, rate));
    },
  );

  route.post(
    '/v1/exchange/orders',
    memberWrite({
      scope: 'exchange:write',
      errors: exchangeErrors.execute,
      operationId: 'createExchangeOrder',
      summary: 'Execute an exchange',
      description: [
        '`{quote_id}` executes a locked quote at its numbers before `quote_expires_at` (after it: ' +
          '`state_invalid`; an executed quote: `state_invalid`; parallel executions of one quote: one ' +
          'execution); `from_amount`, `from_asset` and `to_asset` may come with it, and must then be the ' +
          "quote's (`invalid_request` otherwise, nothing executed). ",
        '`{from_asset, to_asset, from_amount}` executes at market, priced now. Every gate applies again: ' +
          'member active, KYC, direction enabled, amount range, daily limits, step-up at or above the ' +
          "direction's threshold (`step_up_required`; repeat with `x-step-up` and the same key), balance " +
          '(`insufficient_balance`). ',
        'One execution moves both assets in one transaction (docs/exchange.md). After a timeout, read the ' +
          'order (`GET /v1/exchange/orders/{id}` with the quote id, or the list) before retrying.',
      ].join(''),
      tags,
      body: OrderBody,
      response: { 201: ExchangeOrder },
    }),
    {
      // A market order is priced before its transaction: the rate is asked of the rate service.
      prepare: async ({ principal, body, req }) => {
        const request = executeRequestOf(body);
        const call = { scope: principal, stepUp: stepUpCall(req) };
        if (request.kind === 'locked') return { call, request };
        return { call, request, rate: await askRate(ctx, principal, request.from, request.to) };
      },
      commitMany: (trx, plans, mode) => executeOrders(ctx, trx, plans, mode),
    },
  );

  route.get(
    '/v1/exchange/orders',
    readList({
      scope: 'exchange:read',
      operationId: 'listExchangeOrders',
      summary: 'List exchange orders',
      description:
        'On behalf of a member: its orders (locked quotes included); as the merchant: all of them. Newest ' +
        'first; optional `status`.',
      tags,
      query: statusPageQuery(['quoted', 'completed', 'expired']),
      item: ExchangeOrder,
    }),
    async ({ principal, query }) => readOrders(ctx, principal, query),
  );

  route.get(
    '/v1/exchange/orders/:id',
    readOne({
      scope: 'exchange:read',
      errors: exchangeErrors.get,
      operationId: 'getExchangeOrder',
      summary: 'Get an exchange order',
      description:
        'A locked quote too (its `quote_id`). On behalf of a member, only its own. A lock past ' +
        "`quote_expires_at` (merchant's clock) is answered `expired`, never `quoted`.",
      tags,
      params: IdParams,
      response: ExchangeOrder,
    }),
    async ({ principal, params }) => readOrder(ctx, principal, params.id),
  );

  route.post(
    '/v1/merchant/conversions',
    {
      ...merchantWrite({
        scope: 'merchant:write',
        errors: conversionErrors.create,
        operationId: 'createMerchantConversion',
        summary: "Convert between the merchant's own balances",
        description:
          "Converts the merchant's prepaid balance of `from_asset` into `to_asset`, priced at execution " +
          '(same rate service and rules as member exchange). A `quote_id` gives 400 ' +
          '`quote_lock_unsupported`. Pairs: `GET /v1/merchant/conversion-pairs`. Not enough prepaid balance: ' +
          '`merchant_insufficient_funds`.',
        tags,
        body: ConversionBody,
        response: { 201: Conversion },
      }),
      // Before the body's schema: `{quote_id}` alone (an exchange order's body) is told to remove the
      // quote, not that from_asset is missing.
      preValidation: async (req) => refuseQuoteId((req.body ?? {}) as { quote_id?: unknown }),
    },
    {
      prepare: async ({ principal, body }) => {
        refuseQuoteId(body);
        const sides = sidesOf(body);
        return { principal, body, rate: await askRate(ctx, principal, sides.from, sides.to) };
      },
      commitMany: eachAlone((trx, p: ConversionPlan) => createConversion(ctx, trx, p.principal, p.body, p.rate)),
    },
  );

  route.get(
    '/v1/merchant/conversion-pairs',
    readList({
      scope: 'merchant:read',
      principal: 'merchant',
      operationId: 'listMerchantConversionPairs',
      summary: 'List merchant conversion pairs',
      description: 'From the exchange directions catalogue (bounded list, never paged).',
      tags,
      item: ConversionPair,
    }),
    async ({ principal }) => constantList(await conversionPairs(db, principal.environment)),
  );
});
