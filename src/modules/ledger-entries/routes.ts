import { Type } from 'typebox';
import { MemberAssetCreatedFilter } from '../../platform/routes/list-filters.js';
import { publicRoutes } from '../../platform/routes/route-module.js';
import { ApiError } from '../../platform/errors.js';
import { PageQuery, constantList } from '../../platform/routes/pagination.js';
import { resolveMember } from '../members/index.js';
import { entryPage, findEntry, storedEntryId } from './queries.js';
import { idParams, readList, readOne } from '../../platform/routes/route-kinds.js';

const LedgerLine = Type.Object(
  {
    account: Type.Object(
      {
        owner: Type.Union([Type.Literal('member'), Type.Literal('merchant')]),
        owner_id: Type.String({ description: 'mem_<uuid> or the merchant id' }),
        bucket: Type.String({
          description:
            'member: available, frozen, withdrawing, earn, card:<card id>, card_held:<card id>; merchant: ' +
            'custody, prepaid, fee_income, fee_retained, ' +
            ("and platform:<bucket> for the platform's counter-account kept for this merchant " +
              '(settlement_clearing, prepaid_funding, fee_income, earn_interest)'),
        }),
      },
      { title: 'LedgerAccount' },
    ),
    asset: Type.String(),
    debit: Type.String({ description: "decimal string with the asset's scale; 0 on a credit line" }),
    credit: Type.String({ description: "decimal string with the asset's scale; 0 on a debit line" }),
  },
  { title: 'LedgerLine' },
);

export const LedgerEntry = Type.Object(
  {
    id: Type.String({ description: 'jre_<uuid>' }),
    created_at: Type.String({ format: 'date-time' }),
    kind: Type.String({ description: 'the movement, e.g. deposit, withdrawal.lock, withdrawal.confirm' }),
    reference: Type.Object(
      {
        object: Type.String({ description: 'the object type, e.g. deposit, withdrawal' }),
        id: Type.String(),
      },
      { title: 'LedgerReference' },
    ),
    lines: Type.Array(LedgerLine, { description: 'debits equal credits' }),
  },
  { title: 'LedgerEntry' },
);

const tags = ['Ledger'];
const idShape = /^[A-Za-z0-9_.:-]{1,100}$/;

export const ledgerEntryRoutes = publicRoutes((route, ctx) => {
  route.get(
    '/v1/ledger/entries',
    readList({
      scope: 'ledger:read',
      principal: 'merchant',
      operationId: 'listLedgerEntries',
      summary: "The merchant's journal entries",
      description:
        'Newest first, cursor pages. Each entry is one balanced movement of one asset; its lines name ' +
        'member and merchant accounts ' +
        ("(the platform's counter-account kept for this merchant as `platform:<bucket>` of the merchant). " +
          'Filters combine: `member_id` ') +
        ('(either form; an unknown member gives an empty page), `asset`, `reference_id` (the object the ' +
          'entry moved money for), ') +
        '`created_gte` (inclusive) / `created_lt` (exclusive), ISO 8601 with a time zone.',
      tags,
      query: Type.Object({
        ...PageQuery.properties,
        member_id: MemberAssetCreatedFilter.member_id,
        asset: MemberAssetCreatedFilter.asset,
        reference_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        created_gte: MemberAssetCreatedFilter.created_gte,
        created_lt: MemberAssetCreatedFilter.created_lt,
      }),
      item: LedgerEntry,
    }),
    async ({ principal, query }) => {
      const { merchantId, environment } = principal;
      let memberId: string | undefined;
      if (query.member_id !== undefined) {
        const member = idShape.test(query.member_id)
          ? await resolveMember(ctx.db, merchantId, environment, query.member_id)
          : undefined;
        if (!member) return constantList([]);
        memberId = member.id;
      }
      return entryPage(
        ctx.db,
        {
          merchantId,
          environment,
          memberId,
          asset: query.asset?.toUpperCase(),
          referenceId: query.reference_id,
          createdGte: query.created_gte === undefined ? undefined : new Date(query.created_gte),
          createdLt: query.created_lt === undefined ? undefined : new Date(query.created_lt),
        },
        query,
      );
    },
  );

  route.get(
    '/v1/ledger/entries/:id',
    readOne({
      scope: 'ledger:read',
      principal: 'merchant',
      errors: ['not_found'],
      operationId: 'getLedgerEntry',
      summary: 'Get a journal entry',
      description: "One of the merchant's entries; another merchant's, or another environment's, is `not_found`.",
      tags,
      params: idParams('jre_ prefix optional'),
      response: LedgerEntry,
    }),
    async ({ principal, params }) => {
      const entry = idShape.test(params.id)
        ? await findEntry(ctx.db, principal.merchantId, principal.environment, storedEntryId(params.id))
        : undefined;
      if (!entry) throw new ApiError('not_found', 'No such ledger entry.');
      return entry;
    },
  );
});
