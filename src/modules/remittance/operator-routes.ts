import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { OperatorEnvironment, OperatorIdParams as IdParams, operatorRouter } from '../../platform/operator-route.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { corridorById, createCorridor, listCorridorsPage, updateCorridor, viewCorridor } from './corridors.js';
import { findOrder } from './order-queries.js';
import { viewOf } from './orders.js';
import { reconcileDueOrders, resolveOrder } from './reconcile.js';
import { Remittance } from './route-schemas.js';
import { CorridorSettingsSchema, ContractsSchema, OperatorCorridor, PaymentMethodSchema } from './schemas.js';

/**
 * Operator side of remittance: the corridor catalogue (docs/remittance.md, "Corridors").
 * Corridors are never deleted (orders and payees refer to them): `enabled: false` retires one.
 */
export async function remittanceOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = operatorRouter(app, ctx);

  route.get('/admin/v1/remit/corridors', {
    schema: {
      operationId: 'listCorridors',
      querystring: Type.Object({
        ...PageQuery.properties,
        environment: Type.Optional(OperatorEnvironment),
        country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
      }),
      response: { 200: listEnvelope(OperatorCorridor) },
    },
  }, ({ query }) => listCorridorsPage(db, query));

  route.get('/admin/v1/remit/corridors/:id', {
    errors: ['not_found'],
    schema: { operationId: 'getCorridor', params: IdParams, response: { 200: OperatorCorridor } },
  }, async ({ params }) => {
    const c = await corridorById(db, params.id);
    if (!c) throw new ApiError('not_found', 'No such corridor.');
    return viewCorridor(db, c);
  });

  route.post('/admin/v1/remit/corridors', {
    errors: ['invalid_fields', 'duplicate_resource'],
    schema: {
      operationId: 'createCorridor',
      body: Type.Object({
        environment: OperatorEnvironment,
        country: Type.String({ pattern: '^[A-Z]{2}$' }),
        currency: Type.String({ pattern: '^[A-Z]{3}$' }),
        payment_method: PaymentMethodSchema,
        clearing_system: Type.String({ minLength: 1, maxLength: 32, description: 'Case preserved and compared exactly' }),
        ...CorridorSettingsSchema,
        contracts: ContractsSchema,
      }),
      response: { 201: OperatorCorridor },
    },
  }, ({ body, write }) => write((trx) => createCorridor(trx, body, ctx.clock.real())));

  route.patch('/admin/v1/remit/corridors/:id', {
    errors: ['not_found', 'invalid_fields'],
    schema: { operationId: 'updateCorridor', params: IdParams, body: Type.Object(CorridorSettingsSchema), response: { 200: OperatorCorridor } },
  }, ({ params, body, write }) => write((trx) => updateCorridor(trx, params.id, body)));

  const OperatorRemittance = Type.Object({
    ...Remittance.properties,
    merchant_id: Type.String(),
    internal_status: Type.String(),
    upstream_outcome: Type.String(),
    provider_order_id: Type.Union([Type.String(), Type.Null()]),
    provider_status: Type.Union([Type.String(), Type.Null()]),
    check_count: Type.Integer(),
  }, { title: 'OperatorRemittance' });
  const operatorView = async (id: string) => {
    const row = await findOrder(db, id);
    if (!row) throw new ApiError('not_found', 'No such remittance.');
    return {
      ...(await viewOf(db, row)), merchant_id: row.merchant_id, internal_status: row.status, upstream_outcome: row.upstream_outcome,
      provider_order_id: row.provider_order_id, provider_status: row.provider_status, check_count: row.check_count,
    };
  };

  route.get('/admin/v1/remittances/:id', {
    errors: ['not_found'],
    schema: { operationId: 'getRemittance', params: IdParams, response: { 200: OperatorRemittance } },
  }, ({ params }) => operatorView(params.id));

  // One reconciliation pass of remittance orders now (the ticker does it every few seconds).
  route.post('/admin/v1/remittances/reconciliation/run', {
    schema: { operationId: 'runRemittanceReconciliation', response: { 200: Type.Object({ checked: Type.Integer() }) } },
  }, async () => ({ checked: await reconcileDueOrders(ctx) }));

  // The operator's decision on an open (typically suspended) order; the provider is asked first (resolveOrder).
  route.post('/admin/v1/remittances/:id/resolve', {
    errors: ['not_found', 'state_invalid'],
    schema: {
      operationId: 'resolveRemittance',
      params: IdParams,
      body: Type.Object({ status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }),
      response: { 200: OperatorRemittance },
    },
  }, async ({ params, body }) => {
    const order = await findOrder(db, params.id);
    if (!order) throw new ApiError('not_found', 'No such remittance.');
    await resolveOrder(ctx, order, body.status);
    return operatorView(order.id);
  });
}
