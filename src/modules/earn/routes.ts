import { Type } from 'typebox';
import { constantList } from '../../platform/routes/pagination.js';
import {
  idParams,
  memberWrite,
  Nullable,
  readList,
  readOne,
  statusPageQuery,
} from '../../platform/routes/route-kinds.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { earnErrors, getOrder, listOrders, listPositions, listProducts, redeemMany, subscribeMany } from './service.js';

const tags = ['Earn'];

export const EarnProduct = Type.Object(
  {
    id: Type.String({ description: '`epr_...`; passed as `product_id`' }),
    asset: Type.String(),
    type: Type.Union([Type.Literal('flexible'), Type.Literal('fixed')]),
    term_days: Type.Integer({ description: '0 for flexible' }),
    apr: Type.String({
      description:
        'Annual rate as a decimal fraction (`0.0365` = 3.65 %); interest accrues daily as principal × apr / ' +
        '365, rounded down',
    }),
    min_amount: Type.String(),
    max_amount: Nullable(Type.String()),
    enabled: Type.Boolean(),
  },
  { title: 'EarnProduct' },
);

const EarnOrder = Type.Object(
  {
    id: Type.String({ description: '`ero_<uuid>`' }),
    position_id: Type.String({ description: '`epo_<uuid>`' }),
    product_id: Type.String(),
    asset: Type.String(),
    type: Type.String(),
    term_days: Type.Integer(),
    apr: Type.String(),
    amount: Type.String(),
    status: Type.String({
      description:
        '`active`, `settled` (fixed-term matured, principal and interest paid), `redeemed` (flexible, ' +
        'principal back to available)',
    }),
    status_version: Type.Integer(),
    interest_accrued: Type.String({ description: 'Accrued and not yet paid (fixed-term, until maturity)' }),
    interest_paid: Type.String(),
    started_at: Type.String(),
    matures_at: Nullable(Type.String()),
    settled_at: Nullable(Type.String()),
    redeemed_at: Nullable(Type.String()),
    created_at: Type.String(),
  },
  { title: 'EarnOrder' },
);

const EarnPosition = Type.Object(
  {
    id: Type.String({ description: '`epo_<uuid>`' }),
    order_id: Type.String(),
    product_id: Type.String(),
    asset: Type.String(),
    type: Type.String(),
    principal: Type.String(),
    interest_accrued: Type.String(),
    interest_paid: Type.String(),
    status: Type.String({ description: '`active` or `closed`' }),
    redeemable: Type.Boolean(),
    started_at: Type.String(),
    matures_at: Nullable(Type.String()),
    next_accrual_at: Nullable(Type.String()),
  },
  { title: 'EarnPosition' },
);

/** Earn (extensions 10): products, subscriptions, positions, redemption. */
export const earnRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/v1/earn/products',
    readList({
      scope: 'earn:read',
      operationId: 'listEarnProducts',
      summary: 'List earn products',
      description: 'Enabled products (bounded list, never paged).',
      tags,
      item: EarnProduct,
    }),
    async ({ principal }) => constantList(await listProducts(db, principal.environment)),
  );

  route.post(
    '/v1/earn/orders',
    memberWrite({
      scope: 'earn:write',
      errors: earnErrors.subscribe,
      operationId: 'createEarnOrder',
      summary: 'Subscribe to an earn product',
      description:
        'Moves `amount` from available to earn; 201 earn order (`active`). No event at the start. ' +
        "Flexible: interest paid to available every day of the merchant's clock (`earn.order.settled`, " +
        "`data.id` = the member's internal id, `status_version` 0). Fixed-term: interest accrues daily and " +
        'is paid with the principal at maturity (`earn.order.settled`, `data.id` = the order id).',
      tags,
      body: Type.Object({
        product_id: Type.String({ minLength: 1, maxLength: 100 }),
        amount: Type.String({ maxLength: 64 }),
      }),
      response: { 201: EarnOrder },
    }),
    {
      plan: ({ principal, body }) => ({ scope: principal, body }),
      commitMany: (trx, plans) => subscribeMany(ctx, trx, plans),
    },
  );

  route.get(
    '/v1/earn/orders',
    readList({
      scope: 'earn:read',
      operationId: 'listEarnOrders',
      summary: 'List earn orders',
      tags,
      query: statusPageQuery(['active', 'settled', 'redeemed']),
      item: EarnOrder,
    }),
    async ({ principal, query }) => listOrders(db, principal, query),
  );

  route.get(
    '/v1/earn/orders/:id',
    readOne({
      scope: 'earn:read',
      errors: ['not_found'],
      operationId: 'getEarnOrder',
      summary: 'Get an earn order',
      tags,
      params: idParams(),
      response: EarnOrder,
    }),
    async ({ principal, params }) => getOrder(db, principal, params.id),
  );

  route.get(
    '/v1/earn/positions',
    readList({
      scope: 'earn:read',
      operationId: 'listEarnPositions',
      summary: 'List earn positions',
      tags,
      query: statusPageQuery(['active', 'closed']),
      item: EarnPosition,
    }),
    async ({ principal, query }) => listPositions(db, principal, query),
  );

  route.post(
    '/v1/earn/positions/:id/redeem',
    memberWrite({
      scope: 'earn:write',
      errors: earnErrors.redeem,
      operationId: 'redeemEarnPosition',
      summary: 'Redeem a flexible earn position',
      description:
        'Flexible: the principal goes back to available. A fixed-term position before maturity (or any ' +
        'closed position): 400 `state_invalid`; at or after maturity, not yet settled by the daily ' +
        'process: settled now (principal and interest to available) and answered closed.',
      tags,
      params: idParams('`epo_` prefix optional'),
      response: { 200: EarnPosition },
    }),
    {
      plan: ({ principal, params }) => ({ scope: principal, id: params.id }),
      commitMany: (trx, plans) => redeemMany(ctx, trx, plans),
    },
  );
});
