import { Type } from 'typebox';
import { ApiError } from '../../../platform/errors.js';
import { OperatorEnvironment, OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import { operatorList } from '../../../platform/routes/route-kinds.js';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { corridorById } from './queries.js';
import { CorridorSettingsSchema, ContractsSchema, OperatorCorridor, PaymentMethodSchema } from './schemas.js';
import { createCorridor, listCorridorsPage, updateCorridor, viewCorridor } from './service.js';

/**
 * The corridor catalogue on the operator API (docs/remittance.md, "Corridors"). Corridors are
 * never deleted (orders and payees refer to them): `enabled: false` retires one.
 */
export const corridorOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/remit/corridors',
    operatorList({
      operationId: 'listCorridors',
      query: Type.Object({
        ...PageQuery.properties,
        environment: Type.Optional(OperatorEnvironment),
        country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
      }),
      item: OperatorCorridor,
    }),
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
});
