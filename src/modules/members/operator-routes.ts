import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { operatorRouter } from '../../platform/operator-route.js';
import { reviewKyc } from './service.js';

/** Operator calls of members: the KYC review. */
export async function memberOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  operatorRouter(app, ctx).post('/admin/v1/members/:id/kyc-review', {
    errors: ['member_not_found'],
    schema: {
      params: Type.Object({ id: Type.String({ pattern: '^mem_' }) }),
      body: Type.Object({
        decision: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
        level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
      }),
      response: { 200: Type.Object({ id: Type.String(), kyc_level: Type.Integer() }) },
    },
  }, ({ params, body, write }) => write((trx) => reviewKyc(trx, params.id, body.decision, body.level)));
}
