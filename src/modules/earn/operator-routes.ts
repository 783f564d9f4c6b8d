import { Type } from 'typebox';
import { ApiError, positiveAmount } from '../../platform/errors.js';
import { OperatorEnvironment, OperatorIdParams as IdParams } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import {
  EnvironmentQuery,
  operatorCreate,
  operatorList,
  operatorUpdate,
  orNotFound,
} from '../../platform/routes/route-kinds.js';
import { constantList } from '../../platform/routes/pagination.js';
import { newId } from '../../platform/ids.js';
import { parseAmount } from '../../money/index.js';
import { getAsset } from '../assets/index.js';
import { EarnProduct } from './routes.js';
import { insertProduct, updateProduct } from './queries.js';
import { listProducts } from './service.js';
import { productView } from './views.js';

/** Operator side of earn: the product catalogue (docs/earn.md). Products are never deleted: `enabled: false` withdraws
 * one. */
export const earnOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/earn/products',
    operatorList({
      operationId: 'listEarnProducts',
      query: EnvironmentQuery,
      item: EarnProduct,
    }),
    async ({ query }) => constantList(await listProducts(db, query.environment, false)),
  );

  route.post(
    '/admin/v1/earn/products',
    operatorCreate({
      operationId: 'createEarnProduct',
      errors: ['invalid_fields', 'invalid_request'],
      body: Type.Object({
        environment: OperatorEnvironment,
        asset: Type.String({ maxLength: 16 }),
        type: Type.Union([Type.Literal('flexible'), Type.Literal('fixed')]),
        term_days: Type.Integer({ minimum: 0, maximum: 3650 }),
        apr_bps: Type.Integer({ minimum: 0, maximum: 10000 }),
        min_amount: Type.String({ maxLength: 64 }),
        max_amount: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
      }),
      response: EarnProduct,
    }),
    ({ body, write }) =>
      write(async (trx) => {
        const asset = await getAsset(trx, body.asset.toUpperCase());
        if (!asset)
          throw new ApiError('invalid_fields', 'Unknown asset.', {
            fields: [{ key: 'asset', reason: 'unknown_asset' }],
          });
        if ((body.type === 'flexible') !== (body.term_days === 0))
          throw new ApiError('invalid_fields', 'term_days is 0 exactly for flexible products.', {
            fields: [{ key: 'term_days', reason: 'inconsistent' }],
          });
        // Both bounds above zero and max not below min (the table refuses zero: a 500 before).
        const minAmount = positiveAmount(parseAmount(body.min_amount, asset.scale, 'min_amount'), 'min_amount');
        const maxAmount =
          body.max_amount === undefined || body.max_amount === null
            ? null
            : positiveAmount(parseAmount(body.max_amount, asset.scale, 'max_amount'), 'max_amount');
        if (maxAmount !== null && maxAmount < minAmount) {
          throw new ApiError('invalid_fields', 'max_amount is below min_amount: no subscription would fit.', {
            fields: [{ key: 'max_amount', reason: 'below_min_amount' }],
          });
        }
        const row = await insertProduct(trx, {
          id: newId('epr'),
          environment: body.environment,
          asset: asset.code,
          type: body.type,
          term_days: body.term_days,
          apr_bps: body.apr_bps,
          min_amount: minAmount.toString(),
          max_amount: maxAmount === null ? null : maxAmount.toString(),
          updated_at: ctx.clock.real(),
        });
        return productView(row, asset.scale);
      }),
  );

  route.patch(
    '/admin/v1/earn/products/:id',
    operatorUpdate({
      operationId: 'updateEarnProduct',
      params: IdParams,
      body: Type.Object({
        enabled: Type.Optional(Type.Boolean()),
        apr_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
      }),
      response: EarnProduct,
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        // Only the two settings the schema names: the body may carry other keys (validation keeps them),
        // and a column named by one of them (asset, min_amount, type...) must never be set from here.
        const set: { enabled?: boolean; apr_bps?: number; updated_at: Date } = { updated_at: ctx.clock.real() };
        if (body.enabled !== undefined) set.enabled = body.enabled;
        if (body.apr_bps !== undefined) set.apr_bps = body.apr_bps;
        const row = orNotFound(await updateProduct(trx, params.id, set), 'No such earn product.');
        return productView(row, (await getAsset(trx, row.asset))?.scale ?? 2);
      }),
  );
});
