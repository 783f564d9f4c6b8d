import { Type } from 'typebox';
import { MemberAssetCreatedFilter, MemberRef } from '../../platform/routes/list-filters.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { idParams, readList, readOne } from '../../platform/routes/route-kinds.js';
import { PageQuery } from '../../platform/routes/pagination.js';
import { createDeposits, depositErrors, getDeposit, listDeposits } from './service.js';

const Deposit = Type.Object(
  {
    id: Type.String({ description: 'dep_<uuid>' }),
    member_id: Type.String({ description: 'mem_<uuid>' }),
    asset: Type.String(),
    network: Type.Union([Type.String(), Type.Null()]),
    amount: Type.String({ description: "decimal string with the asset's scale" }),
    tx_hash: Type.String(),
    status: Type.Literal('credited'),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Deposit' },
);

const tags = ['Deposits'];

export const depositRoutes = publicRoutes((route, ctx) => {
  route.post(
    '/v1/deposits',
    {
      access: { scope: 'deposits:write', idempotency: 'required', signature: 'always' },
      errors: depositErrors.create,
      schema: {
        operationId: 'createDeposit',
        summary: 'Report a deposit',
        description:
          "Credits the member's available balance and the merchant's custody of the asset by `amount`, in " +
          'one transaction. ' +
          ('The same tx_hash and asset reported again with a new key answers 409 duplicate_resource (a hash ' +
            'of 64 hex digits, with or without 0x, in any letter case: it names one transaction). Always ' +
            'signed.'),
        tags,
        body: Type.Object({
          member_id: MemberRef,
          asset: Type.String({ minLength: 1, maxLength: 16 }),
          amount: Type.String({
            minLength: 1,
            maxLength: 80,
            description: "decimal string; at most the asset's scale in places",
          }),
          tx_hash: Type.String({ minLength: 1, maxLength: 200 }),
          network: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
        }),
        response: { 201: Deposit },
      },
    },
    {
      plan: ({ principal, body }) => ({
        merchantId: principal.merchantId,
        environment: principal.environment,
        input: body,
      }),
      commitMany: createDeposits,
    },
  );

  route.get(
    '/v1/deposits/:id',
    readOne({
      scope: 'deposits:read',
      errors: depositErrors.get,
      operationId: 'getDeposit',
      summary: 'Get a deposit',
      description:
        "The merchant reads any of its deposits; on behalf of a member, only that member's own. Another " +
        "merchant's deposit, or another environment's, is `not_found`.",
      tags,
      params: idParams('dep_ prefix optional'),
      response: Deposit,
    }),
    async ({ principal, params }) => getDeposit(ctx.db, principal, params.id),
  );

  route.get(
    '/v1/deposits',
    readList({
      scope: 'deposits:read',
      operationId: 'listDeposits',
      summary: 'List deposits',
      description:
        "As the merchant: all its deposits; on behalf of a member: that member's own. Newest first, cursor pages. " +
        ('Filters combine: `member_id` (either form; an unknown member, or another member than the one ' +
          'acted for, gives an empty page), ') +
        '`asset`, and `created_gte` (inclusive) / `created_lt` (exclusive), ISO 8601 with a time zone.',
      tags,
      query: Type.Object({ ...PageQuery.properties, ...MemberAssetCreatedFilter }),
      item: Deposit,
    }),
    async ({ principal, query }) => listDeposits(ctx.db, principal, query),
  );
});
