import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { executeWrite } from '../../platform/idempotency.js';
import { createDeposit } from './service.js';

const Deposit = Type.Object({
  id: Type.String({ description: 'dep_<uuid>' }),
  member_id: Type.String({ description: 'mem_<uuid>' }),
  asset: Type.String(),
  network: Type.Union([Type.String(), Type.Null()]),
  amount: Type.String({ description: "decimal string with the asset's scale" }),
  tx_hash: Type.String(),
  status: Type.Literal('credited'),
  created_at: Type.String({ format: 'date-time' }),
});

export async function depositRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  app.post('/v1/deposits', {
    config: {
      access: {
        scope: 'deposits:write',
        idempotency: 'required',
        signature: 'always',
        errors: ['member_not_found', 'asset_not_allowed', 'duplicate_resource'],
      },
    },
    schema: {
      summary: 'Report a deposit',
      description:
        "Credits the member's available balance and the merchant's custody of the asset by `amount`, in one transaction. " +
        'The same tx_hash and asset reported again with a new key answers 409 duplicate_resource. Always signed.',
      tags: ['Deposits'],
      body: Type.Object({
        member_id: Type.String({ minLength: 1, maxLength: 100, description: 'mem_<uuid> or external_member_id' }),
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        amount: Type.String({ minLength: 1, maxLength: 80, description: "decimal string; at most the asset's scale in places" }),
        tx_hash: Type.String({ minLength: 1, maxLength: 200 }),
        network: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
      }),
      response: { 201: Deposit },
    },
  }, async (req, reply) =>
    executeWrite(ctx.db, req, reply, async (trx) => ({
      status: 201,
      body: await createDeposit(trx, req.auth!.merchantId, req.auth!.environment, req.body),
    })));
}
