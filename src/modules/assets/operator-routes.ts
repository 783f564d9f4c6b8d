import { Type } from 'typebox';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { constantList } from '../../platform/routes/pagination.js';
import { parseAmount } from '../../money/index.js';
import { assetCodePattern, assetTypes, checkAddressPattern, networkCodePattern, operatorAssetView } from './rules.js';
import { createAsset, getAsset, listAssets, putAssetNetwork, setAssetEnabled } from './queries.js';
import {
  operatorCreate,
  operatorList,
  operatorReadOne,
  operatorUpdate,
  orNotFound,
} from '../../platform/routes/route-kinds.js';

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

  route.get('/admin/v1/assets', operatorList({ operationId: 'listAssets', item: OperatorAsset }), async () =>
    constantList((await listAssets(db, { enabledOnly: false })).map(operatorAssetView)),
  );

  route.get(
    '/admin/v1/assets/:code',
    operatorReadOne({ operationId: 'getAsset', params: CodeParams, response: OperatorAsset }),
    async ({ params }) => operatorAssetView(orNotFound(await getAsset(db, params.code), 'No such asset.')),
  );

  route.post(
    '/admin/v1/assets',
    operatorCreate({
      operationId: 'createAsset',
      errors: ['duplicate_resource'],
      body: Type.Object({
        code: Type.String({ pattern: assetCodePattern }),
        scale: Type.Integer({ minimum: 0, maximum: 18 }),
        type: AssetType,
      }),
      response: OperatorAsset,
    }),
    async ({ body, write }) => operatorAssetView(await write((trx) => createAsset(trx, body))),
  );

  route.patch(
    '/admin/v1/assets/:code',
    operatorUpdate({
      operationId: 'updateAsset',
      params: CodeParams,
      body: Type.Object({ enabled: Type.Boolean() }),
      response: OperatorAsset,
    }),
    async ({ params, body, write }) =>
      operatorAssetView(await write((trx) => setAssetEnabled(trx, params.code, body.enabled))),
  );

  route.put(
    '/admin/v1/assets/:code/networks/:network',
    operatorUpdate({
      operationId: 'setAssetNetwork',
      params: NetworkParams,
      body: Type.Object({
        enabled: Type.Boolean(),
        withdrawal_fee: Decimal,
        withdrawal_min: Decimal,
        address_pattern: Type.String({ minLength: 1, maxLength: 512 }),
      }),
      response: OperatorAsset,
    }),
    async ({ params, body, write }) => {
      const asset = orNotFound(await getAsset(db, params.code), 'No such asset.');
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
