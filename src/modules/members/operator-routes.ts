import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { reviewKyc } from './service.js';

/** Operator calls of members: the KYC review. */
export async function memberOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  app.post('/admin/v1/members/:id/kyc-review', {
    schema: {
      params: Type.Object({ id: Type.String({ pattern: '^mem_' }) }),
      body: Type.Object({
        decision: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
        level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
      }),
    },
  }, async (req) => reviewKyc(ctx.db, req.params.id, req.body.decision, req.body.level));
}
