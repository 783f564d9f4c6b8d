import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams, Time } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { EnvironmentQuery, operatorList, operatorUpdate, orNotFound } from '../../platform/routes/route-kinds.js';
import { constantList, listEnvelope } from '../../platform/routes/pagination.js';
import { ApiError } from '../../platform/errors.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { getAsset } from '../assets/index.js';
import { getMerchant } from '../merchants/index.js';
import { listThresholds, putThreshold } from './queries.js';
import { isStepUpAction, thresholdActions } from './rules.js';

const actions = [...thresholdActions];
const Threshold = Type.Object(
  {
    action: Type.String(),
    asset: Type.String(),
    amount: Type.String({ description: "Decimal at the asset's scale: step-up at or above it" }),
  },
  { title: 'StepUpThreshold' },
);

/**
 * The operator's side of step-up (docs/step-up.md): thresholds per merchant, environment, action
 * and asset, and the notifier simulator's outbox (the codes members "received").
 */
export const stepUpOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/merchants/:id/step-up-thresholds',
    operatorList({
      operationId: 'getMerchantStepUpThresholds',
      errors: ['not_found'],
      params: OperatorIdParams,
      query: EnvironmentQuery,
      item: Threshold,
    }),
    async ({ params, query }) => {
      await getMerchant(db, params.id);
      const rows = await listThresholds(db, { merchantId: params.id, environment: query.environment });
      const scales = new Map<string, number>();
      for (const r of rows) if (!scales.has(r.asset)) scales.set(r.asset, (await getAsset(db, r.asset))!.scale);
      return constantList(
        rows.map((r) => ({
          action: r.action,
          asset: r.asset,
          amount: formatAmount(r.minAmount, scales.get(r.asset)!),
        })),
      );
    },
  );

  route.put(
    '/admin/v1/merchants/:id/step-up-thresholds',
    operatorUpdate({
      operationId: 'setMerchantStepUpThresholds',
      params: OperatorIdParams,
      body: Type.Object({
        environment: OperatorEnvironment,
        action: Type.String({ minLength: 1, maxLength: 64, description: `One of: ${actions.join(', ')}` }),
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        amount: Type.Union([Type.String({ minLength: 1, maxLength: 80 }), Type.Null()], {
          description:
            'At or above this amount the action needs step-up ("0": always); null removes the threshold ' +
            '(no step-up).',
        }),
      }),
      response: Type.Object({
        environment: Type.String(),
        action: Type.String(),
        asset: Type.String(),
        amount: Type.Union([Type.String(), Type.Null()]),
      }),
    }),
    async ({ params, body, write }) => {
      await getMerchant(db, params.id);
      // Only actions whose gate reads these thresholds (`thresholdActions`); the others decide elsewhere.
      if (!isStepUpAction(body.action) || !thresholdActions.includes(body.action))
        throw new ApiError('invalid_request', `action must be one of ${actions.join(', ')}.`);
      const asset = orNotFound(await getAsset(db, body.asset.trim().toUpperCase()), 'No such asset.');
      const minAmount = body.amount === null ? null : parseAmount(body.amount, asset.scale, 'amount');
      await write((trx) =>
        putThreshold(trx, { merchantId: params.id, environment: body.environment }, body.action, asset.code, minAmount),
      );
      return {
        environment: body.environment,
        action: body.action,
        asset: asset.code,
        amount: minAmount === null ? null : formatAmount(minAmount, asset.scale),
      };
    },
  );

  route.get(
    '/admin/v1/notifier/messages',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'listNotifierMessages',
        querystring: Type.Object({
          member_id: Type.String({ minLength: 1, maxLength: 100, description: 'mem_<uuid>' }),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        }),
        response: {
          200: listEnvelope(
            Type.Object({
              merchant_id: Type.String(),
              environment: Type.String(),
              member_id: Type.String(),
              reference: Type.String({ description: 'The step-up challenge the code answers' }),
              code: Type.String(),
              message: Type.String(),
              created_at: Time,
            }),
          ),
        },
      },
    },
    async ({ query }) => {
      const outbox = ctx.upstreams.notifier.outbox;
      if (!outbox) throw new ApiError('not_found', 'The notifier in use keeps no outbox (only the simulator does).');
      const messages = await outbox.list({ memberId: query.member_id, limit: query.limit });
      return constantList(
        messages.map((m) => ({
          merchant_id: m.merchantId,
          environment: m.environment,
          member_id: m.memberId,
          reference: m.reference,
          code: m.code,
          message: m.message,
          created_at: m.createdAt.toISOString(),
        })),
      );
    },
  );
});
