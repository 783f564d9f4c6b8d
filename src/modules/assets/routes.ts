import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { publicAssetView } from './rules.js';
import { listAssets } from './queries.js';
import { router } from '../../platform/routes/route.js';
import { wholeList } from '../../platform/routes/pagination.js';

const AssetItem = Type.Object(
  {
    code: Type.String(),
    scale: Type.Integer({ description: 'Decimal places of amounts in this asset' }),
    type: Type.Union([Type.Literal('crypto'), Type.Literal('fiat')]),
    networks: Type.Array(Type.String(), { description: 'Withdrawal networks that are enabled; empty for fiat' }),
  },
  { title: 'Asset' },
);

const AssetList = wholeList(AssetItem, 'AssetList');

export async function assetRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  router(app, ctx).get(
    '/v1/assets',
    {
      access: { scope: 'token', principal: 'either' },
      schema: {
        operationId: 'listAssets',
        summary: 'List the enabled assets and their withdrawal networks',
        tags: ['Assets'],
        response: { 200: AssetList },
      },
    },
    async () => {
      const assets = await listAssets(ctx.db, { enabledOnly: true });
      return { data: assets.map(publicAssetView), next_cursor: null, has_more: false };
    },
  );
}
