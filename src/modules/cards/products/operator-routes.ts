import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import { wholeList } from '../../../platform/routes/pagination.js';
import { EnvironmentQuery, operatorUpdate } from '../../../platform/routes/route-kinds.js';
import { getMerchant } from '../../merchants/index.js';
import { operatorProductView, updateProduct } from './service.js';
import { OperatorCardProduct } from './schemas.js';
import { allProducts, authorizeBin, binAuthorizationsOf, withdrawBin } from './queries.js';

/** A merchant and one BIN (6 to 8 digits), for PUT and DELETE alike: DELETE took any text and answered 200 echoing it.
 * */
const BinParams = Type.Object({ id: IdParams.properties.id, bin: Type.String({ pattern: '^[0-9]{6,8}$' }) });
const Bins = wholeList(Type.Object({ bin: Type.String(), created_at: Type.String() }));
/** A BIN's authorisation for a merchant after a PUT or a DELETE. */
const BinAuthorization = Type.Object({ bin: Type.String(), authorized: Type.Boolean() });

/** Operator side of cards: the product catalogue and per-merchant BIN authorisations (docs/cards.md). */
export const cardOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/cards/products',
    {
      schema: {
        operationId: 'listCardProducts',
        querystring: Type.Object({ environment: Type.Optional(OperatorEnvironment) }),
        response: { 200: wholeList(OperatorCardProduct) },
      },
    },
    async ({ query }) => {
      const data = [];
      for (const p of await allProducts(db, query.environment)) data.push(await operatorProductView(db, p));
      return { data, next_cursor: null, has_more: false };
    },
  );

  route.patch(
    '/admin/v1/cards/products/:id',
    operatorUpdate({
      operationId: 'updateCardProduct',
      errors: ['not_found', 'invalid_fields', 'invalid_request'],
      params: IdParams,
      body: Type.Object({
        enabled: Type.Optional(Type.Boolean()),
        source_assets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16 }), { maxItems: 20 })),
        opening_fee: Type.Optional(Type.String()),
        topup_min: Type.Optional(Type.String()),
        topup_max_single: Type.Optional(Type.String()),
        max_single: Type.Optional(Type.String()),
        max_daily: Type.Optional(Type.String()),
        max_monthly: Type.Optional(Type.String()),
        billing_address_updatable: Type.Optional(Type.Boolean()),
        card_lists_supported: Type.Optional(Type.Boolean()),
        replacement_fee: Type.Optional(
          Type.String({ description: 'Charged on a security replacement (card currency)' }),
        ),
        postage_fee: Type.Optional(Type.String({ description: 'Charged with it for a physical card (card currency)' })),
      }),
      response: OperatorCardProduct,
    }),
    ({ params, body, write }) => write((trx) => updateProduct(trx, params.id, body, ctx.clock.real())),
  );

  route.get(
    '/admin/v1/merchants/:id/card-bins',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'listMerchantCardBins',
        params: IdParams,
        querystring: EnvironmentQuery,
        response: { 200: Bins },
      },
    },
    async ({ params, query }) => {
      await getMerchant(db, params.id); // an unknown merchant is 404, not an empty list
      const rows = await binAuthorizationsOf(db, params.id, query.environment);
      return {
        data: rows.map((r) => ({ bin: r.bin, created_at: new Date(r.created_at).toISOString() })),
        next_cursor: null,
        has_more: false,
      };
    },
  );

  route.put(
    '/admin/v1/merchants/:id/card-bins/:bin',
    operatorUpdate({
      operationId: 'setMerchantCardBin',
      params: BinParams,
      body: Type.Object({ environment: OperatorEnvironment }),
      response: BinAuthorization,
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        await getMerchant(trx, params.id); // 404 for an unknown merchant (the insert's foreign key was a 500)
        await authorizeBin(trx, params.id, body.environment, params.bin);
        return { bin: params.bin, authorized: true };
      }),
  );

  route.delete(
    '/admin/v1/merchants/:id/card-bins/:bin',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'deleteMerchantCardBin',
        params: BinParams,
        querystring: EnvironmentQuery,
        response: { 200: BinAuthorization },
      },
    },
    ({ params, query, write }) =>
      write(async (trx) => {
        await getMerchant(trx, params.id); // an unknown merchant is 404, as for PUT
        await withdrawBin(trx, params.id, query.environment, params.bin);
        return { bin: params.bin, authorized: false };
      }),
  );
});
