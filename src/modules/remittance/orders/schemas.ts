/** Remittance orders' and conversion dates' TypeBox schemas, with the examples the OpenAPI document shows. */
import { Type } from 'typebox';
import { idParams, Nullable } from '../../../platform/routes/route-kinds.js';

export const ConversionDatesQuery = Type.Object({
  currency: Type.Optional(
    Type.String({ maxLength: 16, description: 'Payout currency, three upper-case letters (required)' }),
  ),
  // No length bound: the reference treats every other value as `express`, however long (the request
  // line's own limit bounds it), never as a malformed request.
  line: Type.Optional(
    Type.String({ description: '`express` (default) or `pobo`; other values are treated as `express`' }),
  ),
});

export const ConversionDatesResponse = Type.Object(
  {
    settlement_currency: Type.String(),
    payout_currency: Type.String(),
    same_currency: Type.Boolean(),
    dates: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }), valid: Type.Boolean() })),
    earliest_valid: Type.String({ description: 'YYYY-MM-DD' }),
  },
  {
    title: 'ConversionDates',
    examples: [
      {
        settlement_currency: 'USD',
        payout_currency: 'EUR',
        same_currency: false,
        earliest_valid: '2025-12-24',
        dates: [
          { date: '2025-12-23', valid: false },
          { date: '2025-12-24', valid: true },
          { date: '2025-12-25', valid: false },
          { date: '2025-12-26', valid: false },
          { date: '2025-12-27', valid: false },
          { date: '2025-12-28', valid: false },
          { date: '2025-12-29', valid: true },
        ],
      },
    ],
  },
);

export const RemittanceBody = Type.Object(
  {
    payee_id: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "pye_<number> (prefix optional) of one of the member's payees",
    }),
    source_asset: Type.String({
      minLength: 1,
      maxLength: 16,
      description: 'The asset debited; converted to the payout currency when it differs',
    }),
    source_amount: Type.String({
      minLength: 1,
      maxLength: 40,
      description: "Decimal string at the source asset's scale; the fee is charged on top",
    }),
  },
  { examples: [{ payee_id: 'pye_3141592653589793', source_asset: 'USDT', source_amount: '250.00' }] },
);

export const Remittance = Type.Object(
  {
    id: Type.String({ description: 'rmt_<uuid>' }),
    payee_id: Type.String(),
    member_id: Type.String(),
    status: Type.Union(
      [
        Type.Literal('pending'),
        Type.Literal('processing'),
        Type.Literal('completed'),
        Type.Literal('failed'),
        Type.Literal('returned'),
      ],
      {
        description:
          '`pending` (funds frozen, not yet with the provider), `processing` (with the provider), ' +
          '`completed` (paid out), `failed` (freeze released in full), `returned` (paid out, then returned ' +
          'by the beneficiary bank: the amount is back in available, the fee is kept)',
      },
    ),
    status_version: Type.Integer({
      description: 'Increases with each status; merge `remittance.order.*` webhook events forward by it',
    }),
    source_asset: Type.String(),
    source_amount: Type.String(),
    fee: Type.String({ description: 'In the source asset, on top of source_amount' }),
    payout_currency: Type.String(),
    payout_amount: Type.String({ description: 'source_amount × rate, rounded down' }),
    rate: Type.String({
      description:
        'Payout units per source unit applied (mid less the spread, rounded down to 10 places); 1 when no conversion',
    }),
    payout_date: Nullable(
      Type.String({ description: "YYYY-MM-DD: the provider's payout day (an estimate until dispatch)" }),
    ),
    failure_reason: Nullable(
      Type.String({
        description:
          'When failed: `upstream_rejected`, `payee_rejected`, `upstream_not_found`, `upstream_failed`, `operator`',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'RemittanceOrder',
    examples: [
      {
        id: 'rmt_6b1d3c2a-8f0e-4e55-9a7b-1c2d3e4f5a6b',
        payee_id: 'pye_3141592653589793',
        member_id: 'mem_0d7e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a',
        status: 'pending',
        status_version: 1,
        source_asset: 'USDT',
        source_amount: '250.000000',
        fee: '2.333250',
        payout_currency: 'EUR',
        payout_amount: '230.78',
        rate: '0.9231481481',
        payout_date: '2026-01-05',
        failure_reason: null,
        created_at: '2026-01-05T09:00:00.000Z',
        updated_at: '2026-01-05T09:00:00.000Z',
      },
    ],
  },
);

export const RemittanceIdParams = idParams('rmt_ prefix optional');

/** An order as the operator sees it: the public fields and the provider's. */
export const OperatorRemittance = Type.Object(
  {
    ...Remittance.properties,
    merchant_id: Type.String(),
    internal_status: Type.String(),
    upstream_outcome: Type.String(),
    provider_order_id: Type.Union([Type.String(), Type.Null()]),
    provider_status: Type.Union([Type.String(), Type.Null()]),
    check_count: Type.Integer(),
  },
  { title: 'OperatorRemittance' },
);
