import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { verifyLedger } from '../../ledger/verify.js';
import { adjustCustody, creditPrepaid } from './service.js';

const Environment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);
const MerchantParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Operator calls on balances: prepaid credits, custody adjustments and the ledger check. */
export async function balanceOperatorRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;

  app.post('/admin/v1/merchants/:id/prepaid-credits', {
    schema: {
      params: MerchantParams,
      body: Type.Object({ environment: Environment, asset: Type.String({ minLength: 1, maxLength: 16 }), amount: Type.String({ minLength: 1, maxLength: 80 }) }),
    },
  }, async (req, reply) => reply.code(201).send(await creditPrepaid(db, req.params.id, req.body)));

  app.post('/admin/v1/merchants/:id/custody-adjustments', {
    schema: {
      params: MerchantParams,
      body: Type.Object({
        environment: Environment,
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        amount: Type.String({ minLength: 1, maxLength: 80 }),
        direction: Type.Union([Type.Literal('increase'), Type.Literal('decrease')]),
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      }),
    },
  }, async (req, reply) => reply.code(201).send(await adjustCustody(db, req.params.id, req.body)));

  // The ledger's invariants over one snapshot; `ok: false` lists what is wrong.
  app.get('/admin/v1/ledger/verify', async () => verifyLedger(db));
}
