import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { EnvironmentQuery, operatorUpdate } from '../../platform/routes/route-kinds.js';
import { getMerchant } from '../merchants/index.js';
import { frameAncestorsMax } from './security-headers.js';
import { getFrameAncestors, hostedScreenErrors, setFrameAncestors } from './service.js';

const Settings = Type.Object(
  {
    merchant_id: Type.String(),
    environment: OperatorEnvironment,
    frame_ancestors: Type.Array(Type.String()),
  },
  { title: 'MerchantHostedScreenSettings' },
);

/** Operator calls: a merchant's hosted-screen settings (the same rule as the merchant's own PUT). */
export const hostedScreenOperatorRoutes = operatorRoutes((route, ctx) => {
  route.get(
    '/admin/v1/merchants/:id/hosted-screens',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'getMerchantHostedScreens',
        params: OperatorIdParams,
        querystring: EnvironmentQuery,
        response: { 200: Settings },
      },
    },
    async ({ params, query }) => {
      await getMerchant(ctx.db, params.id);
      return {
        merchant_id: params.id,
        environment: query.environment,
        ...(await getFrameAncestors(ctx.db, params.id, query.environment)),
      };
    },
  );

  route.put(
    '/admin/v1/merchants/:id/hosted-screens',
    operatorUpdate({
      operationId: 'setMerchantHostedScreens',
      errors: hostedScreenErrors.operatorSettings,
      params: OperatorIdParams,
      body: Type.Object({
        environment: OperatorEnvironment,
        frame_ancestors: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: frameAncestorsMax }),
      }),
      response: Settings,
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        await getMerchant(trx, params.id);
        const set = await setFrameAncestors(ctx, trx, params.id, body.environment, body.frame_ancestors);
        return { merchant_id: params.id, environment: body.environment, ...set };
      }),
  );
});
