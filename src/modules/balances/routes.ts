import { Type } from 'typebox';
import { PageQuery, constantList } from '../../platform/routes/pagination.js';
import { memberBalances, merchantBalances } from './queries.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { ApiError } from '../../platform/errors.js';
import type { ClockScope } from '../../platform/clock.js';
import { createMonitor, deleteMonitor, listMonitors, monitorErrors, monitorsMax } from './monitors.js';
import { idParams, merchantWrite, readList } from '../../platform/routes/route-kinds.js';

const BalanceMonitor = Type.Object(
  {
    id: Type.String({ description: 'bmn_<uuid>' }),
    balance: Type.Union([Type.Literal('prepaid'), Type.Literal('custody')]),
    asset: Type.String(),
    below: Type.String({ description: "decimal string with the asset's scale" }),
    state: Type.Union([Type.Literal('ok'), Type.Literal('triggered')], {
      description: '`triggered` while the balance is below `below`',
    }),
  },
  { title: 'BalanceMonitor' },
);
const DeletedBalanceMonitor = Type.Object(
  { id: Type.String({ description: 'the removed monitor (bmn_<uuid>)' }), deleted: Type.Literal(true) },
  { title: 'DeletedBalanceMonitor' },
);

const AsOfQuery = Type.Object({
  as_of: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'ISO 8601 with a time zone: the balances as they were at that instant (every posting created at or ' +
        'before it); ' +
        "not after the current time (a sandbox merchant's clock); without it, now.",
    }),
  ),
});

const MemberBalance = Type.Object(
  {
    asset: Type.String(),
    available: Type.String(),
    frozen: Type.String(),
    withdrawing: Type.String(),
    earn: Type.String(),
    card: Type.String(),
    total: Type.String(),
  },
  { title: 'Balance' },
);

const MerchantBalance = Type.Object(
  { asset: Type.String(), custody: Type.String(), prepaid_available: Type.String() },
  { title: 'MerchantBalance' },
);

export const balanceRoutes = publicRoutes((route, ctx) => {
  /**
   * A future instant is refused (its answer could still change); the present is the scope's
   * clock, a sandbox merchant's own (docs/ledger.md "As of").
   */
  const asOf = async (value: string | undefined, scope: ClockScope): Promise<Date | undefined> => {
    if (value === undefined) return undefined;
    const at = new Date(value);
    if (Number.isNaN(at.getTime()))
      throw new ApiError('invalid_request', 'as_of must be an ISO 8601 date-time with a time zone.');
    if (at.getTime() > (await ctx.clock.now(ctx.db, scope)).getTime())
      throw new ApiError('invalid_request', 'as_of must not be in the future.');
    return at;
  };
  route.get(
    '/v1/balances',
    readList({
      scope: 'balances:read',
      principal: 'member',
      operationId: 'listBalances',
      summary: "A member's balances per asset and bucket",
      description:
        'Only `available` is spendable. Decimal strings with the asset scale. Not paged. With `as_of`, the ' +
        'buckets as they were at that instant.',
      tags: ['Balances'],
      query: AsOfQuery,
      item: MemberBalance,
    }),
    async ({ principal, query }) =>
      constantList(
        await memberBalances(ctx.db, principal.environment, principal.memberId, await asOf(query.as_of, principal)),
      ),
  );

  route.get(
    '/v1/merchant/balances',
    readList({
      scope: 'merchant:read',
      principal: 'merchant',
      operationId: 'listMerchantBalances',
      summary: "The merchant's custody and prepaid balances per asset",
      description: 'With `as_of`, custody and prepaid as they were at that instant.',
      tags: ['Balances'],
      query: AsOfQuery,
      item: MerchantBalance,
    }),
    async ({ principal, query }) =>
      constantList(
        await merchantBalances(ctx.db, principal.environment, principal.merchantId, await asOf(query.as_of, principal)),
      ),
  );

  route.post(
    '/v1/balance-monitors',
    merchantWrite({
      scope: 'merchant:write',
      errors: monitorErrors.create,
      operationId: 'createBalanceMonitor',
      summary: 'Watch the prepaid or custody balance of an asset',
      description:
        'When a posting takes the balance below `below`, a `balance_monitor.triggered` event is written ' +
        'once, in the same transaction; ' +
        ('when one brings it back at or above, `balance_monitor.resolved` once. `state` at creation is the ' +
          "current balance's (no event). ") +
        `At most ${monitorsMax} monitors per merchant and environment.`,
      tags: ['Balances'],
      body: Type.Object({
        balance: Type.Union([Type.Literal('prepaid'), Type.Literal('custody')]),
        asset: Type.String({ minLength: 1, maxLength: 16 }),
        below: Type.String({
          minLength: 1,
          maxLength: 80,
          description: "decimal string > 0; at most the asset's scale in places",
        }),
      }),
      response: { 201: BalanceMonitor },
    }),
    async ({ principal, body, write }) => write((trx) => createMonitor(trx, ctx.clock, principal, body)),
  );

  route.get(
    '/v1/balance-monitors',
    readList({
      scope: 'merchant:read',
      principal: 'merchant',
      operationId: 'listBalanceMonitors',
      summary: "The merchant's balance monitors",
      description: 'Newest first, cursor pages.',
      tags: ['Balances'],
      query: PageQuery,
      item: BalanceMonitor,
    }),
    async ({ principal, query }) => listMonitors(ctx.db, principal, query),
  );

  route.delete(
    '/v1/balance-monitors/:id',
    merchantWrite({
      scope: 'merchant:write',
      idempotency: 'none',
      errors: monitorErrors.remove,
      operationId: 'deleteBalanceMonitor',
      summary: 'Remove a balance monitor',
      description: "Another merchant's monitor, another environment's or one already removed is `not_found`.",
      tags: ['Balances'],
      params: idParams('bmn_ prefix optional'),
      response: { 200: DeletedBalanceMonitor },
    }),
    async ({ principal, params, write }) => write((trx) => deleteMonitor(trx, principal, params.id)),
  );
});
