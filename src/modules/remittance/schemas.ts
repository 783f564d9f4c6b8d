/** TypeBox schemas the remittance routes share (public and operator). */
import { Type } from 'typebox';
import { fieldTypes, identifierParts } from './contracts.js';

/** A string of an enumeration, typed as its union. */
const literals = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<T>(Type.Union(values.map((v) => Type.Literal(v)), options));

export const EntityTypeSchema = literals(['INDIVIDUAL', 'COMPANY'] as const);
export const PaymentMethodSchema = literals(['LOCAL', 'SWIFT'] as const);

export const FieldSpecSchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 64, description: 'Flat key with dots, e.g. `bank_details.iban`' }),
  label: Type.String({ minLength: 1, maxLength: 100 }),
  type: literals(fieldTypes, { description: 'How the value is normalised and checked' }),
  required: Type.Boolean(),
  max_length: Type.Integer({ minimum: 1, maximum: 256 }),
  pattern: Type.Optional(Type.String({ maxLength: 500, description: 'Anchored regular expression over the normalised value' })),
  enum: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
  account_identifier: Type.Optional(literals(identifierParts)),
  type_field: Type.Optional(Type.String({ maxLength: 64 })),
  refresh_on_change: Type.Optional(Type.Boolean()),
  example: Type.Optional(Type.String({ maxLength: 256 })),
  description: Type.Optional(Type.String({ maxLength: 500 })),
}, { additionalProperties: false });

export const ContractsSchema = Type.Object({
  INDIVIDUAL: Type.Optional(Type.Array(FieldSpecSchema, { maxItems: 40 })),
  COMPANY: Type.Optional(Type.Array(FieldSpecSchema, { maxItems: 40 })),
}, { additionalProperties: false });

const Amount = Type.String({ maxLength: 40, description: 'Decimal string in the payout currency' });
const AmountOrNull = Type.Union([Amount, Type.Null()], { description: 'Decimal string in the payout currency; null: no limit' });
const Country = Type.String({ pattern: '^[A-Z]{2}$' });

export const CorridorSettingsSchema = {
  enabled: Type.Optional(Type.Boolean()),
  contracts: Type.Optional(ContractsSchema),
  restricted_jurisdictions: Type.Optional(Type.Array(Country, { maxItems: 250, description: 'A payee whose bank, BIC or address is in one of these countries is refused' })),
  confirmable_routing_types: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 20, description: 'Routing-code types the provider can confirm: `sort_code`, `aba`, `bic`' })),
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

export const OperatorCorridor = Type.Object({
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
}, { title: 'Corridor' });
