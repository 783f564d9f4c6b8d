import { Type } from 'typebox';
import { ApiError } from '../../../platform/errors.js';
import { OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import { findOrder } from './queries.js';
import { reconcileDueOrders, resolveOrder } from './reconcile.js';
import { OperatorRemittance } from './schemas.js';
import { viewOf } from './service.js';

/** Remittance orders on the operator API: an order with its provider's side, a reconciliation pass, the resolve by
 * hand. */
export const orderOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  const operatorView = async (id: string) => {
    const row = await findOrder(db, id);
    if (!row) throw new ApiError('not_found', 'No such remittance.');
    return {
      ...(await viewOf(db, row)),
      merchant_id: row.merchant_id,
      internal_status: row.status,
      upstream_outcome: row.upstream_outcome,
      provider_order_id: row.provider_order_id,
      provider_status: row.provider_status,
      check_count: row.check_count,
    };
  };

  route.get(
    '/admin/v1/remittances/:id',
    {
      errors: ['not_found'],
      schema: { operationId: 'getRemittance', params: IdParams, response: { 200: OperatorRemittance } },
    },
    ({ params }) => operatorView(params.id),
  );

  // One reconciliation pass of remittance orders now (the ticker does it every few seconds).
  route.post(
    '/admin/v1/remittances/reconciliation/run',
    {
      schema: {
        operationId: 'runRemittanceReconciliation',
        response: { 200: Type.Object({ checked: Type.Integer() }) },
      },
    },
    async () => ({ checked: await reconcileDueOrders(ctx) }),
  );

  // The operator's decision on an open (typically suspended) order; the provider is asked first (resolveOrder).
  route.post(
    '/admin/v1/remittances/:id/resolve',
    {
      errors: ['not_found', 'state_invalid'],
      schema: {
        operationId: 'resolveRemittance',
        params: IdParams,
        body: Type.Object({ status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }),
        response: { 200: OperatorRemittance },
      },
    },
    async ({ params, body }) => {
      const order = await findOrder(db, params.id);
      if (!order) throw new ApiError('not_found', 'No such remittance.');
      await resolveOrder(ctx, order, body.status);
      return operatorView(order.id);
    },
  );
});
