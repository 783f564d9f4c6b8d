import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { PageQuery, constantList } from '../../platform/pagination.js';
import { listAssets } from '../assets/queries.js';
import { qrSchemes } from './schemes.js';
import { findOrder, scaleOf } from './queries.js';
import { listOpenOrders } from './reads.js';
import { reconcileDueOrders } from './reconcile.js';
import { refundPayment, resolvePayment } from './operator.js';
import { operatorOrderView } from './views.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Operator side of QR pay: scheme catalogue, reconciliation view, refunds and manual resolution. */
export async function qrpayOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.get('/admin/v1/qrpay/schemes', async () => {
    const enabled = new Set((await listAssets(db, { enabledOnly: true })).filter((a) => a.type === 'fiat').map((a) => a.code));
    return constantList(qrSchemes.map((s) => ({ ...s, guids: [...s.guids], payable: enabled.has(s.currency) })));
  });

  // Orders whose outcome is not final yet (processing, or suspended awaiting an operator).
  app.get('/admin/v1/upstreams/reconciliation', {
    schema: { querystring: Type.Object({ ...PageQuery.properties, merchant_id: Type.Optional(Type.String({ maxLength: 100 })) }) },
  }, async (req) => listOpenOrders(db, req.query));

  // Runs one reconciliation pass now (the ticker does it on its own every few seconds).
  app.post('/admin/v1/upstreams/reconciliation/run', async () => ({ checked: await reconcileDueOrders(ctx) }));

  app.get('/admin/v1/qrpay/payments/:id', { schema: { params: IdParams } }, async (req) => {
    const row = await findOrder(db, req.params.id);
    if (!row) throw new ApiError('not_found', 'No such QR payment.');
    return operatorOrderView(row, await scaleOf(db, row.asset));
  });

  // Acquirer-side refund of a completed payment: asked of the provider, then refunded to available once.
  app.post('/admin/v1/qrpay/payments/:id/refund', { schema: { params: IdParams } }, async (req) => {
    const { row, replayed } = await refundPayment(ctx, req.params.id);
    return { ...operatorOrderView(row, await scaleOf(db, row.asset)), replayed };
  });

  // The operator's decision on an open (typically suspended) payment after checking with the provider.
  app.post('/admin/v1/qrpay/payments/:id/resolve', {
    schema: { params: IdParams, body: Type.Object({ status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }) },
  }, async (req) => {
    const row = await resolvePayment(ctx, req.params.id, req.body.status);
    return operatorOrderView(row, await scaleOf(db, row.asset));
  });
}
