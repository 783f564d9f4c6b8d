/** Corridors' TypeBox schemas: the payee form (public) and the catalogue (operator), with the examples the OpenAPI
 * document shows. */
import { Type } from 'typebox';
import { Nullable } from '../../../platform/routes/route-kinds.js';
import { fieldTypes, identifierParts } from './contracts.js';

/** A string of an enumeration, typed as its union. */
const literals = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<T>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      options,
    ),
  );

export const EntityTypeSchema = literals(['INDIVIDUAL', 'COMPANY'] as const);
export const PaymentMethodSchema = literals(['LOCAL', 'SWIFT'] as const);

export const FieldSpecSchema = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 64, description: 'Flat key with dots, e.g. `bank_details.iban`' }),
    label: Type.String({ minLength: 1, maxLength: 100 }),
    type: literals(fieldTypes, { description: 'How the value is normalised and checked' }),
    required: Type.Boolean(),
    max_length: Type.Integer({ minimum: 1, maximum: 256 }),
    pattern: Type.Optional(
      Type.String({ maxLength: 500, description: 'Anchored regular expression over the normalised value' }),
    ),
    enum: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
    account_identifier: Type.Optional(literals(identifierParts)),
    type_field: Type.Optional(Type.String({ maxLength: 64 })),
    refresh_on_change: Type.Optional(Type.Boolean()),
    example: Type.Optional(Type.String({ maxLength: 256 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const ContractsSchema = Type.Object(
  {
    INDIVIDUAL: Type.Optional(Type.Array(FieldSpecSchema, { maxItems: 40 })),
    COMPANY: Type.Optional(Type.Array(FieldSpecSchema, { maxItems: 40 })),
  },
  { additionalProperties: false },
);

const Amount = Type.String({ maxLength: 40, description: 'Decimal string in the payout currency' });
const AmountOrNull = Type.Union([Amount, Type.Null()], {
  description: 'Decimal string in the payout currency; null: no limit',
});
const Country = Type.String({ pattern: '^[A-Z]{2}$' });

export const CorridorSettingsSchema = {
  enabled: Type.Optional(Type.Boolean()),
  contracts: Type.Optional(ContractsSchema),
  restricted_jurisdictions: Type.Optional(
    Type.Array(Country, {
      maxItems: 250,
      description: 'A payee whose bank, BIC or address is in one of these countries is refused',
    }),
  ),
  confirmable_routing_types: Type.Optional(
    Type.Array(Type.String({ maxLength: 32 }), {
      maxItems: 20,
      description: 'Routing-code types the provider can confirm: `sort_code`, `aba`, `bic`',
    }),
  ),
  min_kyc_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })),
  fee_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  fee_fixed: Type.Optional(Amount),
  fx_spread_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 5_000 })),
  payout_min: Type.Optional(Amount),
  member_single_max: Type.Optional(AmountOrNull),
  member_daily_max: Type.Optional(AmountOrNull),
  merchant_single_max: Type.Optional(AmountOrNull),
  merchant_daily_max: Type.Optional(AmountOrNull),
};

export const OperatorCorridor = Type.Object(
  {
    id: Type.String(),
    environment: Type.String(),
    country: Type.String(),
    currency: Type.String(),
    payment_method: Type.String(),
    clearing_system: Type.String(),
    enabled: Type.Boolean(),
    entity_types: Type.Array(Type.String()),
    contracts: ContractsSchema,
    restricted_jurisdictions: Type.Array(Type.String()),
    confirmable_routing_types: Type.Array(Type.String()),
    min_kyc_level: Type.Integer(),
    fee_bps: Type.Integer(),
    fee_fixed: Type.String(),
    fx_spread_bps: Type.Integer(),
    payout_min: Type.String(),
    member_single_max: Type.Union([Type.String(), Type.Null()]),
    member_daily_max: Type.Union([Type.String(), Type.Null()]),
    merchant_single_max: Type.Union([Type.String(), Type.Null()]),
    merchant_daily_max: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'Corridor' },
);

// ---------------------------------------------------------------------------------------------
// The payee form (GET /v1/remit/payee-form-schema)

const Selector = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const FormSchemaQuery = Type.Object({
  country_code: Selector('Recipient bank country, two upper-case letters (alias `country`)'),
  country: Selector('Alias of `country_code`'),
  currency: Selector('Payout currency, three upper-case letters'),
  payment_method: Selector('`LOCAL` or `SWIFT` (alias `method`)'),
  method: Selector('Alias of `payment_method`'),
  clearing_system: Selector('Case preserved (alias `clearing`)'),
  clearing: Selector('Alias of `clearing_system`'),
  entity_type: Selector('`INDIVIDUAL` or `COMPANY` (alias `entity`)'),
  entity: Selector('Alias of `entity_type`'),
});

export const FormField = Type.Object(
  {
    key: Type.String({
      description: 'The key to send in `fields` (selectors: the body field of `POST /v1/remit/payees`)',
    }),
    label: Type.String(),
    type: Type.String({
      description: '`enum`, `text`, `alnum_upper`, `digits`, `iban`, `bic`, `country`, `routing_code`',
    }),
    required: Type.Boolean(),
    max_length: Type.Integer({ description: 'Longest normalised value' }),
    pattern: Nullable(Type.String({ description: 'Anchored regular expression over the normalised value' })),
    enum: Nullable(Type.Array(Type.String())),
    example: Nullable(Type.String()),
    description: Nullable(Type.String()),
    group: Nullable(Type.String({ description: '`bank_details`, `address`; null for top-level keys' })),
    account_identifier: Nullable(
      Type.String({
        description:
          'Part of the account identifier: `account_number`, `iban`, `proxy` (at least one of these three is ' +
          'needed), `routing_code`, `bic`',
      }),
    ),
    value: Nullable(Type.String({ description: 'The chosen value (selectors only)' })),
    refresh_on_change: Type.Boolean({
      description: 'When this field changes, ask for the form again with the new value',
    }),
  },
  { title: 'PayeeFormField' },
);

export const FormSchemaResponse = Type.Object(
  {
    step: Type.String({ description: 'The first selector still to choose, or `fields`' }),
    selection: Type.Object({
      country_code: Nullable(Type.String()),
      currency: Nullable(Type.String()),
      payment_method: Nullable(Type.String()),
      clearing_system: Nullable(Type.String()),
      entity_type: Nullable(Type.String()),
    }),
    fields: Type.Array(FormField),
  },
  {
    title: 'PayeeFormSchema',
    examples: [
      {
        step: 'currency',
        selection: {
          country_code: 'GB',
          currency: null,
          payment_method: null,
          clearing_system: null,
          entity_type: null,
        },
        fields: [
          {
            key: 'country_code',
            label: 'Recipient bank country',
            type: 'enum',
            required: true,
            max_length: 32,
            pattern: null,
            enum: ['DE', 'ES', 'FR', 'GB', 'IT', 'NL', 'US'],
            example: null,
            description: null,
            group: null,
            account_identifier: null,
            value: 'GB',
            refresh_on_change: true,
          },
          {
            key: 'currency',
            label: 'Payout currency',
            type: 'enum',
            required: true,
            max_length: 32,
            pattern: null,
            enum: ['GBP'],
            example: null,
            description: null,
            group: null,
            account_identifier: null,
            value: null,
            refresh_on_change: true,
          },
        ],
      },
    ],
  },
);
