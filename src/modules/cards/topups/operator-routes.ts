import { Type } from 'typebox';
import { OperatorIdParams as IdParams } from '../../../platform/routes/operator-route.js';
import { operatorRoutes } from '../../../platform/routes/route-module.js';
import { operatorReadOne, operatorUpdate, orNotFound } from '../../../platform/routes/route-kinds.js';
import { formatStored, parseAmount } from '../../../money/index.js';
import { providerFactsView, resolveByHand } from '../../../provider-orders/index.js';
import { lockProductBySeq, productSeqOf, updateProductRow } from '../products/queries.js';
import { topUpById } from './queries.js';
import { type Db } from '../shared/queries.js';
import { withPrefix as withIdPrefix } from '../../../platform/ids.js';
import { applyTopUpDecision, callInFlight, queryDecision, type TopUpDecision } from './dispatch.js';
import { topUpView } from './views.js';
import { OperatorCardTopUp } from './schemas.js';
import type { CardProductRow } from '../products/tables.js';
import type { CardTopupRow } from './tables.js';
import { isoOrNull } from '../../../platform/dates.js';
import { assetScale } from '../../assets/index.js';

const Bps = Type.Integer({ minimum: 0, maximum: 10_000 });

async function pricingView(db: Db, p: CardProductRow) {
  return {
    product_id: `cpd_${p.seq}`,
    topup_fee_bps: p.topup_fee_bps,
    topup_fee_fixed: formatStored(p.topup_fee_fixed, await assetScale(db, p.currency)),
    topup_fx_markup_bps: p.topup_fx_markup_bps,
  };
}

async function operatorTopUpView(db: Db, row: CardTopupRow) {
  return {
    ...(await topUpView(db, row)),
    merchant_id: row.merchant_id,
    environment: row.environment,
    member_id: row.member_id,
    internal_status: row.status,
    rate: row.rate,
    ...providerFactsView(row),
    next_check_at: isoOrNull(row.next_check_at),
    last_checked_at: isoOrNull(row.last_checked_at),
  };
}

/** Operator side of a card's money (docs/cards.md "Card money"): top-up pricing per product, a top-up with its provider
 * facts, resolving a suspended one. */
export const cardMoneyOperatorRoutes = operatorRoutes((route, ctx) => {
  const { db } = ctx;

  route.patch(
    '/admin/v1/cards/products/:id/topup-pricing',
    operatorUpdate({
      operationId: 'updateCardTopupPricing',
      errors: ['not_found', 'invalid_request'],
      params: IdParams,
      body: Type.Object({
        topup_fee_bps: Type.Optional(Bps),
        topup_fee_fixed: Type.Optional(Type.String({ maxLength: 40 })),
        topup_fx_markup_bps: Type.Optional(Bps),
      }),
      response: Type.Object({
        product_id: Type.String(),
        topup_fee_bps: Type.Integer(),
        topup_fee_fixed: Type.String(),
        topup_fx_markup_bps: Type.Integer(),
      }),
    }),
    ({ params, body, write }) =>
      write(async (trx) => {
        const seq = productSeqOf(params.id);
        const product = orNotFound(seq ? await lockProductBySeq(trx, seq) : undefined, 'No such card product.');
        const set: Record<string, unknown> = { updated_at: ctx.clock.real() };
        if (body.topup_fee_bps !== undefined) set.topup_fee_bps = body.topup_fee_bps;
        if (body.topup_fx_markup_bps !== undefined) set.topup_fx_markup_bps = body.topup_fx_markup_bps;
        if (body.topup_fee_fixed !== undefined)
          set.topup_fee_fixed = parseAmount(
            body.topup_fee_fixed,
            await assetScale(trx, product.currency),
            'topup_fee_fixed',
          ).toString();
        const updated = await updateProductRow(trx, product.seq, set);
        return pricingView(trx, updated);
      }),
  );

  /** The top-up the path names (`ctu_` prefix optional). */
  const topUpOf = async (id: string) => orNotFound(await topUpById(db, withIdPrefix('ctu', id)), 'No such top-up.');

  route.get(
    '/admin/v1/cards/topups/:id',
    operatorReadOne({ operationId: 'getCardTopup', params: IdParams, response: OperatorCardTopUp }),
    async ({ params }) => operatorTopUpView(db, await topUpOf(params.id)),
  );

  route.post(
    '/admin/v1/cards/topups/:id/resolve',
    operatorUpdate({
      operationId: 'resolveCardTopup',
      errors: ['not_found', 'state_invalid'],
      params: IdParams,
      body: Type.Object({ status: Type.Union([Type.Literal('credited'), Type.Literal('failed')]) }),
      response: OperatorCardTopUp,
    }),
    async ({ params, body }) => {
      const row = await topUpOf(params.id);
      // The issuer is asked first; another decision (the issuer's answer, a card that stopped) may
      // win the top-up meanwhile, or it cannot move (not yet sent): never 200 for a decision not taken.
      const done = await resolveByHand<CardTopupRow, TopUpDecision>({
        order: row,
        requested: body.status,
        noun: 'top-up',
        callInFlight: callInFlight(ctx, row),
        queryDecision: () => queryDecision(ctx, row),
        operatorDecision: body.status === 'credited' ? { kind: 'complete' } : { kind: 'fail', reason: 'operator' },
        apply: (decision) => applyTopUpDecision(ctx, row.id, decision, 'query'),
      });
      return operatorTopUpView(db, done);
    },
  );
});
