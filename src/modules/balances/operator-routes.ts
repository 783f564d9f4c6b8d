import { Type } from 'typebox';
import { OperatorEnvironment, OperatorIdParams as MerchantParams } from '../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../platform/routes/route-module.js';
import { operatorCreate } from '../../platform/routes/route-kinds.js';
import { verifyLedger } from '../../money/index.js';
import { adjustCustody, creditPrepaid } from './service.js';

const Asset = Type.String({ minLength: 1, maxLength: 16 });
const Amount = Type.String({ minLength: 1, maxLength: 80 });
const movementErrors = ['not_found', 'asset_not_allowed', 'insufficient_balance'] as const;

/** Operator calls on balances: prepaid credits, custody adjustments and the ledger check. */
export const balanceOperatorRoutes = operatorRoutes((route, ctx) => {
  route.post(
    '/admin/v1/merchants/:id/prepaid-credits',
    operatorCreate({
      operationId: 'createPrepaidCredit',
      errors: movementErrors,
      params: MerchantParams,
      body: Type.Object({ environment: OperatorEnvironment, asset: Asset, amount: Amount }),
      response: Type.Object({ asset: Type.String(), prepaid_available: Type.String() }),
    }),
    ({ params, body, write }) => write((trx) => creditPrepaid(trx, params.id, body)),
  );

  route.post(
    '/admin/v1/merchants/:id/custody-adjustments',
    operatorCreate({
      operationId: 'createCustodyAdjustment',
      errors: movementErrors,
      params: MerchantParams,
      body: Type.Object({
        environment: OperatorEnvironment,
        asset: Asset,
        amount: Amount,
        direction: Type.Union([Type.Literal('increase'), Type.Literal('decrease')]),
        reason: Type.String({ minLength: 1, maxLength: 500 }),
      }),
      response: Type.Object({
        id: Type.String({ description: 'The adjustment (`cad_…`), kept with its reason; its journal entry names it' }),
        asset: Type.String(),
        custody: Type.String(),
      }),
    }),
    ({ params, body, write }) => write((trx) => adjustCustody(trx, params.id, body)),
  );

  // The ledger's invariants over one snapshot (its own read-only transaction); `ok: false` lists what is wrong.
  route.get(
    '/admin/v1/ledger/verify',
    {
      schema: {
        operationId: 'verifyLedger',
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            problems: Type.Array(Type.String()),
            checked: Type.Object({ entries: Type.Integer(), postings: Type.Integer(), accounts: Type.Integer() }),
          }),
        },
      },
    },
    () => verifyLedger(ctx.db),
  );
});
