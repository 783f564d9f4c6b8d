import { Type } from 'typebox';
import type { AppInstance } from '../../../platform/http-app.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError } from '../../../platform/errors.js';
import { OperatorEnvironment, OperatorIdParams as IdParams, operatorRouter } from '../../../platform/operator-route.js';
import { PageQuery, listEnvelope } from '../../../platform/pagination.js';
import { corridorById } from './queries.js';
import { CorridorSettingsSchema, ContractsSchema, OperatorCorridor, PaymentMethodSchema } from './schemas.js';
import { createCorridor, listCorridorsPage, updateCorridor, viewCorridor } from './service.js';

/**
 * The corridor catalogue on the operator API (docs/remittance.md, "Corridors"). Corridors are
 * never deleted (orders and payees refer to them): `enabled: false` retires one.
 */
export async function corridorOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const route = operatorRouter(app, ctx);

  route.get(
    '/admin/v1/remit/corridors',
    {
      schema: {
        operationId: 'listCorridors',
        querystring: Type.Object({
          ...PageQuery.properties,
          environment: Type.Optional(OperatorEnvironment),
          country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
        }),
        response: { 200: listEnvelope(OperatorCorridor) },
      },
    },
    ({ query }) => listCorridorsPage(db, query),
  );

  route.get(
    '/admin/v1/remit/corridors/:id',
    {
      errors: ['not_found'],
      schema: { operationId: 'getCorridor', params: IdParams, response: { 200: OperatorCorridor } },
    },
    async ({ params }) => {
      const c = await corridorById(db, params.id);
      if (!c) throw new ApiError('not_found', 'No such corridor.');
      return viewCorridor(db, c);
    },
  );

  route.post(
    '/admin/v1/remit/corridors',
    {
      errors: ['invalid_fields', 'duplicate_resource'],
      schema: {
        operationId: 'createCorridor',
        body: Type.Object({
          environment: OperatorEnvironment,
          country: Type.String({ pattern: '^[A-Z]{2}$' }),
          currency: Type.String({ pattern: '^[A-Z]{3}$' }),
          payment_method: PaymentMethodSchema,
          clearing_system: Type.String({
            minLength: 1,
            maxLength: 32,
            description: 'Case preserved and compared exactly',
          }),
          ...CorridorSettingsSchema,
          contracts: ContractsSchema,
        }),
        response: { 201: OperatorCorridor },
      },
    },
    ({ body, write }) => write((trx) => createCorridor(trx, body, ctx.clock.real())),
  );

  route.patch(
    '/admin/v1/remit/corridors/:id',
    {
      errors: ['not_found', 'invalid_fields'],
      schema: {
        operationId: 'updateCorridor',
        params: IdParams,
        body: Type.Object(CorridorSettingsSchema),
        response: { 200: OperatorCorridor },
      },
    },
    ({ params, body, write }) => write((trx) => updateCorridor(trx, params.id, body)),
  );
}
