import { Type } from 'typebox';
import { OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import { operatorReadOne, operatorResolve, orNotFound } from '../../../platform/routes/route-kinds.js';
import { findOrder } from './queries.js';
import { reconcileDueOrders, resolveOrder } from './reconcile.js';
import { OperatorRemittance } from './schemas.js';
import { viewOf } from './service.js';
import { providerFactsView } from '../../../provider-orders/index.js';

/** Remittance orders on the operator API: an order with its provider's side, a reconciliation pass, the resolve by
 * hand. */
export const orderOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  const orderOf = async (id: string) => orNotFound(await findOrder(db, id), 'No such remittance.');
  const operatorView = async (id: string) => {
    const row = await orderOf(id);
    return {
      ...(await viewOf(db, row)),
      merchant_id: row.merchant_id,
      internal_status: row.status,
      ...providerFactsView(row),
    };
  };

  route.get(
    '/admin/v1/remittances/:id',
    operatorReadOne({ operationId: 'getRemittance', params: IdParams, response: OperatorRemittance }),
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
    operatorResolve({ operationId: 'resolveRemittance', response: OperatorRemittance }),
    async ({ params, body }) => {
      const order = await orderOf(params.id);
      await resolveOrder(ctx, order, body.status);
      return operatorView(order.id);
    },
  );
});
