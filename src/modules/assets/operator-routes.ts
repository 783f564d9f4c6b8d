import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { parseAmount } from '../../ledger/money.js';
import { assetCodePattern, assetTypes, checkAddressPattern, networkCodePattern, operatorAssetView } from './rules.js';
import { createAsset, getAsset, listAssets, putAssetNetwork, setAssetEnabled } from './queries.js';
import { ApiError } from '../../platform/errors.js';

const CodeParams = Type.Object({ code: Type.String({ pattern: assetCodePattern }) });
const NetworkParams = Type.Object({ code: Type.String({ pattern: assetCodePattern }), network: Type.String({ pattern: networkCodePattern }) });
const Decimal = Type.String({ minLength: 1, maxLength: 80 });

/** Operator calls of the assets catalogue. */
export async function assetOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.get('/admin/v1/assets', async () => {
    const assets = await listAssets(db, { enabledOnly: false });
    return { data: assets.map(operatorAssetView), next_cursor: null, has_more: false };
  });

  app.get('/admin/v1/assets/:code', { schema: { params: CodeParams } }, async (req) => {
    const asset = await getAsset(db, req.params.code);
    if (!asset) throw new ApiError('not_found', 'No such asset.');
    return operatorAssetView(asset);
  });

  app.post('/admin/v1/assets', {
    schema: {
      body: Type.Object({
        code: Type.String({ pattern: assetCodePattern }),
        scale: Type.Integer({ minimum: 0, maximum: 18 }),
        type: Type.Union(assetTypes.map((t) => Type.Literal(t))),
      }),
    },
  }, async (req, reply) => reply.code(201).send(operatorAssetView(await createAsset(db, req.body))));

  app.patch('/admin/v1/assets/:code', {
    schema: { params: CodeParams, body: Type.Object({ enabled: Type.Boolean() }) },
  }, async (req) => operatorAssetView(await setAssetEnabled(db, req.params.code, req.body.enabled)));

  app.put('/admin/v1/assets/:code/networks/:network', {
    schema: {
      params: NetworkParams,
      body: Type.Object({
        enabled: Type.Boolean(),
        withdrawal_fee: Decimal,
        withdrawal_min: Decimal,
        address_pattern: Type.String({ minLength: 1, maxLength: 512 }),
      }),
    },
  }, async (req) => {
    const asset = await getAsset(db, req.params.code);
    if (!asset) throw new ApiError('not_found', 'No such asset.');
    const updated = await putAssetNetwork(db, req.params.code, req.params.network, {
      enabled: req.body.enabled,
      withdrawalFee: parseAmount(req.body.withdrawal_fee, asset.scale, 'withdrawal_fee'),
      withdrawalMin: parseAmount(req.body.withdrawal_min, asset.scale, 'withdrawal_min'),
      addressPattern: checkAddressPattern(req.body.address_pattern),
    });
    return operatorAssetView(updated);
  });
}
