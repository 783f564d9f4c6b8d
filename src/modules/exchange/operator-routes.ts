import { Type } from 'typebox';
import { ApiError } from '../../platform/errors.js';
import { OperatorEnvironment, OperatorIdParams as IdParams } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import {
  Nullable,
  operatorCreate,
  operatorList,
  operatorReadOne,
  operatorUpdate,
} from '../../platform/routes/route-kinds.js';
import { PageQuery } from '../../platform/routes/pagination.js';
import { createDirection, getDirection, listDirections, updateDirection } from './directions.js';

const Amount = Type.String({ maxLength: 64 });
const FeeSide = Type.Union([Type.Literal('from'), Type.Literal('to')]);

const Settings = {
  enabled: Type.Optional(Type.Boolean()),
  min_kyc_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })),
  fee_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
  fee_fixed: Type.Optional(Amount),
  spread_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })),
  max_amount: Type.Optional(Nullable(Amount)),
  member_daily_amount: Type.Optional(Nullable(Amount)),
  // At most the column's (int4) range: a larger count reached the database and answered 500.
  member_daily_count: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }))),
  quote_lock_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600 })),
  step_up_threshold: Type.Optional(Nullable(Amount)),
  merchant_conversion: Type.Optional(Type.Boolean()),
};

const Direction = Type.Object(
  {
    id: Type.String(),
    environment: Type.String(),
    from_asset: Type.String(),
    to_asset: Type.String(),
    enabled: Type.Boolean(),
    min_kyc_level: Type.Integer(),
    fee_side: Type.String(),
    fee_asset: Type.String(),
    fee_bps: Type.Integer(),
    fee_fixed: Type.String(),
    spread_bps: Type.Integer(),
    min_amount: Type.String(),
    max_amount: Nullable(Type.String()),
    member_daily_amount: Nullable(Type.String()),
    member_daily_count: Nullable(Type.Integer()),
    quote_lock_seconds: Type.Integer(),
    step_up_threshold: Nullable(Type.String()),
    merchant_conversion: Type.Boolean(),
  },
  { title: 'ExchangeDirection' },
);

/** Operator side of exchange: the directions catalogue and the simulated rate feed switch (docs/exchange.md). */
export const exchangeOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/exchange/directions',
    operatorList({
      operationId: 'listExchangeDirections',
      query: Type.Object({ ...PageQuery.properties, environment: Type.Optional(OperatorEnvironment) }),
      item: Direction,
    }),
    ({ query }) => listDirections(db, query),
  );

  route.get(
    '/admin/v1/exchange/directions/:id',
    operatorReadOne({ operationId: 'getExchangeDirection', params: IdParams, response: Direction }),
    ({ params }) => getDirection(db, params.id),
  );

  route.post(
    '/admin/v1/exchange/directions',
    operatorCreate({
      operationId: 'createExchangeDirection',
      errors: ['invalid_fields', 'invalid_request', 'duplicate_resource'],
      body: Type.Object({
        environment: OperatorEnvironment,
        from_asset: Type.String({ maxLength: 16 }),
        to_asset: Type.String({ maxLength: 16 }),
        fee_side: FeeSide,
        min_amount: Amount,
        ...Settings,
      }),
      response: Direction,
    }),
    ({ body, write }) => write((trx) => createDirection(trx, body, ctx.clock.real())),
  );

  route.patch(
    '/admin/v1/exchange/directions/:id',
    operatorUpdate({
      operationId: 'updateExchangeDirection',
      errors: ['not_found', 'invalid_fields', 'invalid_request'],
      params: IdParams,
      body: Type.Object({ fee_side: Type.Optional(FeeSide), min_amount: Type.Optional(Amount), ...Settings }),
      response: Direction,
    }),
    ({ params, body, write }) => write((trx) => updateDirection(trx, params.id, body, ctx.clock.real())),
  );

  route.put(
    '/admin/v1/exchange/rate-feeds/:code',
    operatorUpdate({
      operationId: 'setExchangeRateFeed',
      params: Type.Object({ code: Type.String({ maxLength: 16 }) }),
      body: Type.Object({ halted: Type.Boolean() }),
      response: Type.Object({ code: Type.String(), halted: Type.Boolean() }),
    }),
    async ({ params, body }) => {
      const rates = ctx.upstreams.rates;
      if (!rates.halt) throw new ApiError('not_found', 'The rate provider has no feed switch.');
      const code = params.code.toUpperCase();
      rates.halt(code, body.halted ? ctx.clock.real() : undefined);
      return { code, halted: body.halted };
    },
  );
});
