import { Type } from 'typebox';
import { Nullable } from '../../../platform/routes/route-kinds.js';

/** Route schemas of card controls (limits, merchant rules, billing address). The single source for validation, types
 * and OpenAPI. */

const Decimal = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'Decimal in the card currency; `0` = no limit at that layer',
});

export const LimitsBody = Type.Object({
  single: Type.Optional(Decimal),
  daily: Type.Optional(Decimal),
  monthly: Type.Optional(Decimal),
});

export const MerchantRulesBody = Type.Object({
  rule_type: Type.String({
    description: '`white` (only listed spending allowed) or `black` (listed spending refused)',
  }),
  merchant_names: Type.Optional(Type.Array(Type.String(), { description: 'Up to 200; empty means no name matching' })),
  mcc_list: Type.Optional(Type.Array(Type.String(), { description: 'Up to 200 four-digit ISO 18245 codes' })),
});

export const MerchantRules = Type.Object(
  {
    id: Type.String({ description: 'The card id' }),
    rule_type: Type.Union([Type.Literal('white'), Type.Literal('black'), Type.Null()], {
      description: '`white` (only listed spending allowed) or `black` (listed spending refused); null: no rules',
    }),
    merchant_names: Type.Array(Type.String()),
    mcc_list: Type.Array(Type.String()),
    synced: Type.Boolean({ description: 'true = the issuer confirmed this set' }),
    synced_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'ISO 8601 with milliseconds: the last confirmation; null while no set was ever confirmed',
      }),
    ),
  },
  { title: 'CardMerchantRules' },
);

/** Required fields are checked by `addressProblems`, so that every missing one is answered in `fields`
 * (`invalid_fields`). */
export const BillingAddressBody = Type.Object({
  address: Type.Optional(Type.String({ maxLength: 200, description: 'Required' })),
  city: Type.Optional(Type.String({ maxLength: 100, description: 'Required' })),
  state: Type.Optional(Type.String({ maxLength: 100, description: 'Omit where the country has none' })),
  country: Type.Optional(
    Type.String({ maxLength: 8, description: 'Required; ISO 3166-1 alpha-2, upper case (only the shape is checked)' }),
  ),
  postal_code: Type.Optional(Type.String({ maxLength: 20, description: 'Required' })),
});
