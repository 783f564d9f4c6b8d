import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { constantList, listEnvelope } from '../../platform/pagination.js';
import { memberBalances, merchantBalances } from './queries.js';

const MemberBalance = Type.Object({
  asset: Type.String(),
  available: Type.String(),
  frozen: Type.String(),
  withdrawing: Type.String(),
  earn: Type.String(),
  card: Type.String(),
  total: Type.String(),
});

const MerchantBalance = Type.Object({ asset: Type.String(), custody: Type.String(), prepaid_available: Type.String() });

export async function balanceRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/balances', {
    config: { access: { scope: 'balances:read', principal: 'member' } },
    schema: {
      summary: "A member's balances per asset and bucket",
      description: 'Only `available` is spendable. Decimal strings with the asset scale. Not paged.',
      tags: ['Balances'],
      response: { 200: listEnvelope(MemberBalance) },
    },
  }, async (req) => constantList(await memberBalances(ctx.db, req.auth!.environment, req.member!.id)));

  app.get('/v1/merchant/balances', {
    config: { access: { scope: 'merchant:read' } },
    schema: {
      summary: "The merchant's custody and prepaid balances per asset",
      tags: ['Balances'],
      response: { 200: listEnvelope(MerchantBalance) },
    },
  }, async (req) => constantList(await merchantBalances(ctx.db, req.auth!.environment, req.auth!.merchantId)));
}
