import { Type } from 'typebox';
import type { AppInstance } from '../../platform/http-app.js';
import type { ServiceContext } from '../../service-context.js';
import { executeWrite } from '../../platform/idempotency.js';
import { PageQuery, listEnvelope } from '../../platform/pagination.js';
import { confirmWithdrawal, createWithdrawal, failWithdrawal, getWithdrawal, listWithdrawals } from './service.js';

const tags = ['Withdrawals'];
const Withdrawal = Type.Object({
  id: Type.String({ description: 'wdr_<uuid>' }),
  status: Type.Union([Type.Literal('locked'), Type.Literal('settled'), Type.Literal('failed')]),
  status_version: Type.Integer(),
  member_id: Type.String(),
  asset: Type.String(),
  network: Type.String(),
  address: Type.String(),
  amount: Type.String(),
  fee: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'wdr_ prefix optional' }) });

export async function withdrawalRoutes(app: AppInstance, ctx: ServiceContext): Promise<void> {
  const { db } = ctx;
  const caller = (req: { auth?: { merchantId: string; environment: 'sandbox' | 'production' }; member?: { id: string } }) => ({
    merchantId: req.auth!.merchantId,
    environment: req.auth!.environment,
    ...(req.member ? { memberId: req.member.id } : {}),
  });

  app.post('/v1/withdrawals', {
    config: {
      access: {
        scope: 'withdrawals:write', principal: 'member', idempotency: 'required',
        errors: ['asset_not_allowed', 'address_not_allowed', 'insufficient_balance', 'amount_out_of_range'],
      },
    },
    schema: {
      summary: 'Create an on-chain withdrawal',
      description: 'Moves amount plus the network fee from available to withdrawing. The merchant pays out on chain, then confirms (or fails) it.',
      tags,
      body: Type.Object({
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        network: Type.String({ minLength: 1, maxLength: 32 }),
        address: Type.String({ minLength: 1, maxLength: 200 }),
        amount: Type.String({ minLength: 1, maxLength: 80 }),
      }),
      response: { 201: Withdrawal },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({
      status: 201,
      body: await createWithdrawal(trx, { ...caller(req), memberId: req.member!.id, externalMemberId: req.member!.externalMemberId }, req.body),
    })));

  app.post('/v1/withdrawals/:id/confirm', {
    config: {
      access: { scope: 'withdrawals:write', idempotency: 'required', errors: ['order_not_cancellable', 'merchant_custody_shortfall', 'not_found'] },
    },
    schema: {
      summary: 'Confirm that the merchant completed the on-chain payout',
      description: 'Clears withdrawing and reduces custody by the amount plus the fee (the fee becomes the merchant\'s fee income); final. ' +
        'Custody must cover amount plus fee (`merchant_custody_shortfall`). Concurrent calls post once; the others receive `replayed: true`.',
      tags,
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('settled'), replayed: Type.Boolean() }) },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await confirmWithdrawal(trx, caller(req), req.params.id) })));

  app.post('/v1/withdrawals/:id/fail', {
    config: { access: { scope: 'withdrawals:write', idempotency: 'required', errors: ['order_not_cancellable', 'not_found'] } },
    schema: {
      summary: 'Fail a withdrawal the merchant could not pay out',
      description: 'locked → failed; withdrawing returns to available. A settled withdrawal answers order_not_cancellable; a repeat on failed answers 200.',
      tags,
      params: IdParams,
      response: { 200: Withdrawal },
    },
  }, async (req, reply) =>
    executeWrite(db, req, reply, async (trx) => ({ status: 200, body: await failWithdrawal(trx, caller(req), req.params.id) })));

  app.get('/v1/withdrawals/:id', {
    config: { access: { scope: 'withdrawals:read', principal: 'either', errors: ['not_found'] } },
    schema: { summary: 'Get a withdrawal', description: 'On behalf of a member, only that member\'s own.', tags, params: IdParams, response: { 200: Withdrawal } },
  }, async (req) => getWithdrawal(db, caller(req), req.params.id));

  app.get('/v1/withdrawals', {
    config: { access: { scope: 'withdrawals:read', principal: 'either' } },
    schema: {
      summary: 'List withdrawals',
      description: "On behalf of a member: that member's withdrawals; as the merchant: all of them. Newest first.",
      tags,
      querystring: Type.Object({ ...PageQuery.properties, status: Type.Optional(Type.String({ maxLength: 20 })) }),
      response: { 200: listEnvelope(Withdrawal) },
    },
  }, async (req) => listWithdrawals(db, caller(req), req.query));
}
