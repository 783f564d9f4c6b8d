import { Type } from 'typebox';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { constantList, listEnvelope } from '../../platform/routes/pagination.js';
import { parseAmount } from '../../money/index.js';
import { assetCodePattern, assetTypes, checkAddressPattern, networkCodePattern, operatorAssetView } from './rules.js';
import { createAsset, getAsset, listAssets, putAssetNetwork, setAssetEnabled } from './queries.js';
import { ApiError } from '../../platform/errors.js';

const CodeParams = Type.Object({ code: Type.String({ pattern: assetCodePattern }) });
const NetworkParams = Type.Object({
  code: Type.String({ pattern: assetCodePattern }),
  network: Type.String({ pattern: networkCodePattern }),
});
const Decimal = Type.String({ minLength: 1, maxLength: 80 });
const AssetType = Type.Union(assetTypes.map((t) => Type.Literal(t)));
const OperatorAsset = Type.Object(
  {
    code: Type.String(),
    scale: Type.Integer(),
    type: Type.String(),
    enabled: Type.Boolean(),
    networks: Type.Array(
      Type.Object({
        network: Type.String(),
        enabled: Type.Boolean(),
        withdrawal_fee: Type.String(),
        withdrawal_min: Type.String(),
        address_pattern: Type.String(),
      }),
    ),
  },
  { title: 'OperatorAsset' },
);

/** Operator calls of the assets catalogue. */
export const assetOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.get(
    '/admin/v1/assets',
    {
      schema: { operationId: 'listAssets', response: { 200: listEnvelope(OperatorAsset) } },
    },
    async () => constantList((await listAssets(db, { enabledOnly: false })).map(operatorAssetView)),
  );

  route.get(
    '/admin/v1/assets/:code',
    {
      errors: ['not_found'],
      schema: { operationId: 'getAsset', params: CodeParams, response: { 200: OperatorAsset } },
    },
    async ({ params }) => {
      const asset = await getAsset(db, params.code);
      if (!asset) throw new ApiError('not_found', 'No such asset.');
      return operatorAssetView(asset);
    },
  );

  route.post(
    '/admin/v1/assets',
    {
      errors: ['duplicate_resource'],
      schema: {
        operationId: 'createAsset',
        body: Type.Object({
          code: Type.String({ pattern: assetCodePattern }),
          scale: Type.Integer({ minimum: 0, maximum: 18 }),
          type: AssetType,
        }),
        response: { 201: OperatorAsset },
      },
    },
    async ({ body, write }) => operatorAssetView(await write((trx) => createAsset(trx, body))),
  );

  route.patch(
    '/admin/v1/assets/:code',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'updateAsset',
        params: CodeParams,
        body: Type.Object({ enabled: Type.Boolean() }),
        response: { 200: OperatorAsset },
      },
    },
    async ({ params, body, write }) =>
      operatorAssetView(await write((trx) => setAssetEnabled(trx, params.code, body.enabled))),
  );

  route.put(
    '/admin/v1/assets/:code/networks/:network',
    {
      errors: ['not_found'],
      schema: {
        operationId: 'setAssetNetwork',
        params: NetworkParams,
        body: Type.Object({
          enabled: Type.Boolean(),
          withdrawal_fee: Decimal,
          withdrawal_min: Decimal,
          address_pattern: Type.String({ minLength: 1, maxLength: 512 }),
        }),
        response: { 200: OperatorAsset },
      },
    },
    async ({ params, body, write }) => {
      const asset = await getAsset(db, params.code);
      if (!asset) throw new ApiError('not_found', 'No such asset.');
      const input = {
        enabled: body.enabled,
        withdrawalFee: parseAmount(body.withdrawal_fee, asset.scale, 'withdrawal_fee'),
        withdrawalMin: parseAmount(body.withdrawal_min, asset.scale, 'withdrawal_min'),
        addressPattern: checkAddressPattern(body.address_pattern),
      };
      return operatorAssetView(
        await write((trx) => putAssetNetwork(trx, params.code, params.network, input, ctx.clock.real())),
      );
    },
  );
});
