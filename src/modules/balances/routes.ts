import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { constantList, listEnvelope } from '../../platform/pagination.js';
import { memberBalances, merchantBalances } from './queries.js';
import { router } from '../../platform/route.js';

const MemberBalance = Type.Object({
  asset: Type.String(),
  available: Type.String(),
  frozen: Type.String(),
  withdrawing: Type.String(),
  earn: Type.String(),
  card: Type.String(),
  total: Type.String(),
}, { title: 'Balance' });

const MerchantBalance = Type.Object({ asset: Type.String(), custody: Type.String(), prepaid_available: Type.String() }, { title: 'MerchantBalance' });

export async function balanceRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const route = router(app, ctx);
  route.get('/v1/balances', {
    access: { scope: 'balances:read', principal: 'member' },
    schema: {
      operationId: 'listBalances',
      summary: "A member's balances per asset and bucket",
      description: 'Only `available` is spendable. Decimal strings with the asset scale. Not paged.',
      tags: ['Balances'],
      response: { 200: listEnvelope(MemberBalance) },
    },
  }, async ({ principal }) => constantList(await memberBalances(ctx.db, principal.environment, principal.memberId)));

  route.get('/v1/merchant/balances', {
    access: { scope: 'merchant:read' },
    schema: {
      operationId: 'listMerchantBalances',
      summary: "The merchant's custody and prepaid balances per asset",
      tags: ['Balances'],
      response: { 200: listEnvelope(MerchantBalance) },
    },
  }, async ({ principal }) => constantList(await merchantBalances(ctx.db, principal.environment, principal.merchantId)));
}
