import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import {
  operatorCreate,
  operatorList,
  operatorReadOne,
  operatorUpdate,
  orNotFound,
} from '../../../platform/routes/route-kinds.js';
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
    operatorReadOne({ operationId: 'getCorridor', params: IdParams, response: OperatorCorridor }),
    async ({ params }) => viewCorridor(db, orNotFound(await corridorById(db, params.id), 'No such corridor.')),
  );

  route.post(
    '/admin/v1/remit/corridors',
    operatorCreate({
      operationId: 'createCorridor',
      errors: ['invalid_fields', 'duplicate_resource'],
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
      response: OperatorCorridor,
    }),
    ({ body, write }) => write((trx) => createCorridor(trx, body, ctx.clock.real())),
  );

  route.patch(
    '/admin/v1/remit/corridors/:id',
    operatorUpdate({
      operationId: 'updateCorridor',
      errors: ['not_found', 'invalid_fields'],
      params: IdParams,
      body: Type.Object(CorridorSettingsSchema),
      response: OperatorCorridor,
    }),
    ({ params, body, write }) => write((trx) => updateCorridor(trx, params.id, body)),
  );
});
