import { Type } from 'typebox';
import {
  OperatorEnvironment,
  OperatorIdParams as IdParams,
  Time,
  TimeOrNull,
} from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { PageQuery, constantList } from '../../platform/routes/pagination.js';
import { assetScale } from '../assets/index.js';
import { findOrder } from './queries.js';
import { listOpenOrders, schemesWithPayable } from './reads.js';
import { reconcileDueOrders } from './reconcile.js';
import { refundPayment, resolvePayment } from './operator.js';
import { operatorOrderView } from './views.js';
import { QrPayment } from './routes.js';
import {
  operatorList,
  operatorReadOne,
  operatorResolve,
  operatorUpdate,
  orNotFound,
} from '../../platform/routes/route-kinds.js';

const Scheme = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    country: Type.String(),
    currency: Type.String(),
    guids: Type.Array(Type.String()),
    payable: Type.Boolean(),
  },
  { title: 'QrScheme' },
);
/** The public view plus our internal state and the provider's side (`operatorOrderView`). */
const OperatorQrPayment = Type.Object(
  {
    ...QrPayment.properties,
    merchant_id: Type.String(),
    environment: OperatorEnvironment,
    internal_status: Type.String(),
    upstream: Type.String(),
    upstream_outcome: Type.Union([Type.String(), Type.Null()]),
    provider_order_id: Type.Union([Type.String(), Type.Null()]),
    provider_status: Type.Union([Type.String(), Type.Null()]),
    call_started_at: Time,
    check_count: Type.Integer(),
    next_check_at: TimeOrNull,
    last_checked_at: TimeOrNull,
    completed_at: TimeOrNull,
    failed_at: TimeOrNull,
    refunded_at: TimeOrNull,
  },
  { title: 'OperatorQrPayment' },
);

/**
 * Operator side of QR pay: scheme catalogue, reconciliation view, refunds and manual resolution.
 * Refund and resolve call the provider (or apply a decision) between their own transactions
 * (operator.ts), so they do not use `write`.
 */
export const qrpayOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get('/admin/v1/qrpay/schemes', operatorList({ operationId: 'listQrpaySchemes', item: Scheme }), async () =>
    constantList((await schemesWithPayable(db)).map((s) => ({ ...s, guids: [...s.guids] }))),
  );

  // Orders whose outcome is not final yet (processing, or suspended awaiting an operator).
  route.get(
    '/admin/v1/upstreams/reconciliation',
    operatorList({
      operationId: 'listUpstreamReconciliation',
      query: Type.Object({
        ...PageQuery.properties,
        merchant_id: Type.Optional(Type.String({ maxLength: 100 })),
      }),
      item: OperatorQrPayment,
    }),
    ({ query }) => listOpenOrders(db, query),
  );

  // Runs one reconciliation pass now (the ticker does it on its own every few seconds).
  route.post(
    '/admin/v1/upstreams/reconciliation/run',
    {
      schema: { operationId: 'runUpstreamReconciliation', response: { 200: Type.Object({ checked: Type.Integer() }) } },
    },
    async () => ({ checked: await reconcileDueOrders(ctx) }),
  );

  route.get(
    '/admin/v1/qrpay/payments/:id',
    operatorReadOne({ operationId: 'getQrPayment', params: IdParams, response: OperatorQrPayment }),
    async ({ params }) => {
      const row = orNotFound(await findOrder(db, params.id), 'No such QR payment.');
      return operatorOrderView(row, await assetScale(db, row.asset));
    },
  );

  // Acquirer-side refund of a completed payment: asked of the provider, then refunded to available once.
  route.post(
    '/admin/v1/qrpay/payments/:id/refund',
    operatorUpdate({
      operationId: 'refundQrPayment',
      errors: ['not_found', 'state_invalid', 'request_rejected', 'upstream_timeout', 'upstream_error'],
      params: IdParams,
      response: Type.Object({ ...OperatorQrPayment.properties, replayed: Type.Boolean() }),
    }),
    async ({ params }) => {
      const { row, replayed } = await refundPayment(ctx, params.id);
      return { ...operatorOrderView(row, await assetScale(db, row.asset)), replayed };
    },
  );

  // The operator's decision on an open (typically suspended) payment; the provider is asked first (resolveByHand).
  route.post(
    '/admin/v1/qrpay/payments/:id/resolve',
    operatorResolve({ operationId: 'resolveQrPayment', response: OperatorQrPayment }),
    async ({ params, body }) => {
      const row = await resolvePayment(ctx, params.id, body.status);
      return operatorOrderView(row, await assetScale(db, row.asset));
    },
  );
});
