import { Type } from 'typebox';
import { publicRoutes } from '../../platform/routes/route-module.js';
import {
  idParams,
  memberListsOwn,
  memberSeesOwnOnly,
  memberWrite,
  merchantWrite,
  readList,
  readOne,
  statusPageQuery,
} from '../../platform/routes/route-kinds.js';
import { stepUpCall } from '../step-up/index.js';
import {
  confirmWithdrawals,
  createWithdrawals,
  failWithdrawals,
  getWithdrawal,
  listWithdrawals,
  withdrawalErrors,
} from './service.js';

const tags = ['Withdrawals'];
export const Withdrawal = Type.Object(
  {
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
  },
  { title: 'Withdrawal' },
);
const IdParams = idParams('wdr_ prefix optional');

export const withdrawalRoutes = publicRoutes((route, ctx) => {
  const { db } = ctx;

  route.post(
    '/v1/withdrawals',
    memberWrite({
      scope: 'withdrawals:write',
      errors: withdrawalErrors.create,
      operationId: 'createWithdrawal',
      summary: 'Create an on-chain withdrawal',
      description:
        'Moves amount plus the network fee from available to withdrawing. The merchant pays out on chain, ' +
        'then confirms (or fails) it. ' +
        ('At or above the step-up threshold the operator set for the asset (none by default), the first ' +
          'call answers `step_up_required` with a challenge bound to the member and to this asset, network, ' +
          'address and amount; ') +
        'repeat the same request with the same idempotency key and `x-step-up` once the member completed it.',
      tags,
      body: Type.Object({
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        network: Type.String({ minLength: 1, maxLength: 32 }),
        address: Type.String({ minLength: 1, maxLength: 200 }),
        amount: Type.String({ minLength: 1, maxLength: 80 }),
      }),
      response: { 201: Withdrawal },
    }),
    {
      plan: ({ principal, body, req }) => ({
        caller: { ...principal, externalMemberId: principal.member.externalMemberId },
        body,
        stepUp: stepUpCall(req),
      }),
      commitMany: (trx, plans, mode) => createWithdrawals(ctx, trx, plans, mode),
    },
  );

  route.post(
    '/v1/withdrawals/:id/confirm',
    merchantWrite({
      scope: 'withdrawals:write',
      errors: withdrawalErrors.confirm,
      operationId: 'confirmWithdrawal',
      summary: 'Confirm that the merchant completed the on-chain payout',
      description:
        "Clears withdrawing and reduces custody by the amount plus the fee (the fee becomes the merchant's " +
        'fee income); final. ' +
        ('Custody must cover amount plus fee (`merchant_custody_shortfall`). Concurrent calls post once; ' +
          'the others receive `replayed: true`.'),
      tags,
      params: IdParams,
      response: {
        200: Type.Object(
          { id: Type.String(), status: Type.Literal('settled'), replayed: Type.Boolean() },
          { title: 'WithdrawalConfirmation' },
        ),
      },
    }),
    {
      plan: ({ principal, params }) => ({ caller: principal, id: params.id }),
      commitMany: (trx, plans) => confirmWithdrawals(trx, plans),
    },
  );

  route.post(
    '/v1/withdrawals/:id/fail',
    merchantWrite({
      scope: 'withdrawals:write',
      errors: withdrawalErrors.fail,
      operationId: 'failWithdrawal',
      summary: 'Fail a withdrawal the merchant could not pay out',
      description:
        'locked → failed; withdrawing returns to available. A settled withdrawal answers ' +
        'order_not_cancellable; a repeat on failed answers 200.',
      tags,
      params: IdParams,
      response: { 200: Withdrawal },
    }),
    {
      plan: ({ principal, params }) => ({ caller: principal, id: params.id }),
      commitMany: (trx, plans) => failWithdrawals(trx, plans),
    },
  );

  route.get(
    '/v1/withdrawals/:id',
    readOne({
      scope: 'withdrawals:read',
      errors: withdrawalErrors.get,
      operationId: 'getWithdrawal',
      summary: 'Get a withdrawal',
      description: memberSeesOwnOnly,
      tags,
      params: IdParams,
      response: Withdrawal,
    }),
    async ({ principal, params }) => getWithdrawal(db, principal, params.id),
  );

  route.get(
    '/v1/withdrawals',
    readList({
      scope: 'withdrawals:read',
      operationId: 'listWithdrawals',
      summary: 'List withdrawals',
      description: memberListsOwn('withdrawals'),
      tags,
      query: statusPageQuery(['locked', 'settled', 'failed']),
      item: Withdrawal,
    }),
    async ({ principal, query }) => listWithdrawals(db, principal, query),
  );
});
