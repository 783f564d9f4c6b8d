/** The public remittance routes' TypeBox schemas, with the examples the OpenAPI document shows. */
import { Type } from 'typebox';

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

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const FormField = Type.Object({
  key: Type.String({ description: 'The key to send in `fields` (selectors: the body field of `POST /v1/remit/payees`)' }),
  label: Type.String(),
  type: Type.String({ description: '`enum`, `text`, `alnum_upper`, `digits`, `iban`, `bic`, `country`, `routing_code`' }),
  required: Type.Boolean(),
  max_length: Type.Integer({ description: 'Longest normalised value' }),
  pattern: Nullable(Type.String({ description: 'Anchored regular expression over the normalised value' })),
  enum: Nullable(Type.Array(Type.String())),
  example: Nullable(Type.String()),
  description: Nullable(Type.String()),
  group: Nullable(Type.String({ description: '`bank_details`, `address`; null for top-level keys' })),
  account_identifier: Nullable(Type.String({ description: 'Part of the account identifier: `account_number`, `iban`, `proxy` (at least one of these three is needed), `routing_code`, `bic`' })),
  value: Nullable(Type.String({ description: 'The chosen value (selectors only)' })),
  refresh_on_change: Type.Boolean({ description: 'When this field changes, ask for the form again with the new value' }),
}, { title: 'PayeeFormField' });

export const FormSchemaResponse = Type.Object({
  step: Type.String({ description: 'The first selector still to choose, or `fields`' }),
  selection: Type.Object({
    country_code: Nullable(Type.String()),
    currency: Nullable(Type.String()),
    payment_method: Nullable(Type.String()),
    clearing_system: Nullable(Type.String()),
    entity_type: Nullable(Type.String()),
  }),
  fields: Type.Array(FormField),
}, { title: 'PayeeFormSchema',
  examples: [{
    step: 'currency',
    selection: { country_code: 'GB', currency: null, payment_method: null, clearing_system: null, entity_type: null },
    fields: [
      { key: 'country_code', label: 'Recipient bank country', type: 'enum', required: true, max_length: 32, pattern: null, enum: ['DE', 'ES', 'FR', 'GB', 'IT', 'NL', 'US'], example: null, description: null, group: null, account_identifier: null, value: 'GB', refresh_on_change: true },
      { key: 'currency', label: 'Payout currency', type: 'enum', required: true, max_length: 32, pattern: null, enum: ['GBP'], example: null, description: null, group: null, account_identifier: null, value: null, refresh_on_change: true },
    ],
  }],
});

const segment = (description: string) => Type.Optional(Type.String({ description }));

export const PayeeBody = Type.Object({
  country_code: segment('Recipient bank country, two upper-case letters; alias `country`'),
  country: segment('Alias of `country_code`'),
  currency: segment('Payout currency, three upper-case letters'),
  payment_method: segment('`LOCAL` or `SWIFT`; alias `method`'),
  method: segment('Alias of `payment_method`'),
  clearing_system: segment('Case preserved; alias `clearing`'),
  clearing: segment('Alias of `clearing_system`'),
  entity_type: segment('`INDIVIDUAL` or `COMPANY`; alias `entity`'),
  entity: segment('Alias of `entity_type`'),
  nickname: Type.Optional(Type.String({ description: 'Private to the member; truncated beyond 64 characters' })),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Flat map of contract keys (with dots, not nested) to string values; other keys are dropped' })),
}, {
  examples: [{
    country_code: 'DE', currency: 'EUR', payment_method: 'LOCAL', clearing_system: 'SEPA', entity_type: 'INDIVIDUAL', nickname: 'Anna (Berlin)',
    fields: {
      first_name: 'Anna', last_name: 'Müller', 'bank_details.iban': 'DE89 3704 0044 0532 0130 00',
      'address.country': 'DE', 'address.city': 'Berlin', 'address.street_address': 'Unter den Linden 1', 'address.postal_code': '10117',
    },
  }],
});

export const PayeeCreated = Type.Object({
  id: Type.String({ description: 'pye_<number>: an opaque number, in no order (docs/remittance.md)' }),
  outcome: Type.Union([Type.Literal('created'), Type.Literal('linked'), Type.Literal('review')]),
  status: Type.Literal('active'),
}, { examples: [{ id: 'pye_3141592653589793', outcome: 'created', status: 'active' }] });

export const PayeeIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'pye_ prefix optional' }) });

export const Payee = Type.Object({
  id: Type.String({ description: 'pye_<number>: an opaque number, in no order (docs/remittance.md)' }),
  status: Type.String({ description: '`active`' }),
  nickname: Type.String({ description: 'Private to the member; empty when none' }),
  favorite: Type.Boolean(),
  country_code: Type.String(),
  currency: Type.String(),
  payment_method: Type.String(),
  clearing_system: Type.String(),
  entity_type: Type.String(),
  holder_name: Type.String({ description: 'As the member gave it (normalised spacing)' }),
  account_identifier: Type.String({ description: 'The account number, IBAN or proxy, masked (last four shown)' }),
  fields: Type.Record(Type.String(), Type.String(), { description: 'Normalised contract values; account numbers, IBANs and proxies masked' }),
  outcome: Type.String({ description: 'How the link was made: `created`, `linked`, `review`' }),
  name_mismatch: Type.Boolean({ description: 'The holder name differed from the shared payee\'s when linked (`review`)' }),
  name_check: Nullable(Type.Object({
    result: Type.String({ description: '`match`, `close_match`, `no_match`, `unavailable`' }),
    suggested_name: Nullable(Type.String()),
    checked_at: Type.String({ format: 'date-time' }),
  })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Payee',
  examples: [{
    id: 'pye_3141592653589793', status: 'active', nickname: 'Anna (Berlin)', favorite: true, country_code: 'DE', currency: 'EUR', payment_method: 'LOCAL',
    clearing_system: 'SEPA', entity_type: 'INDIVIDUAL', holder_name: 'Anna Müller', account_identifier: 'DE************3000',
    fields: { first_name: 'Anna', last_name: 'Müller', 'bank_details.iban': 'DE************3000', 'address.country': 'DE', 'address.city': 'Berlin', 'address.street_address': 'Unter den Linden 1', 'address.postal_code': '10117' },
    outcome: 'created', name_mismatch: false, name_check: { result: 'match', suggested_name: null, checked_at: '2026-01-05T10:00:00.000Z' },
    created_at: '2026-01-05T09:59:00.000Z', updated_at: '2026-01-05T10:00:00.000Z',
  }],
});

export const PayeeUpdated = Type.Object({
  id: Type.String(),
  nickname: Type.String({ description: 'Private to the member; empty when none' }),
  favorite: Type.Boolean(),
}, { examples: [{ id: 'pye_3141592653589793', nickname: 'Mum', favorite: true }] });

export const NameCheck = Type.Object({
  id: Type.String(),
  result: Type.Union([Type.Literal('match'), Type.Literal('close_match'), Type.Literal('no_match'), Type.Literal('unavailable')]),
  suggested_name: Nullable(Type.String({ description: 'With `close_match`: the name the bank holds' })),
  checked_at: Type.String({ format: 'date-time' }),
}, { title: 'PayeeNameCheck', examples: [{ id: 'pye_3141592653589793', result: 'close_match', suggested_name: 'Max Mustermann', checked_at: '2026-01-05T10:00:00.000Z' }] });

export const ConversionDatesQuery = Type.Object({
  currency: Type.Optional(Type.String({ maxLength: 16, description: 'Payout currency, three upper-case letters (required)' })),
  // No length bound: the reference treats every other value as `express`, however long (the request
  // line's own limit bounds it), never as a malformed request.
  line: Type.Optional(Type.String({ description: '`express` (default) or `pobo`; other values are treated as `express`' })),
});

export const ConversionDatesResponse = Type.Object({
  settlement_currency: Type.String(),
  payout_currency: Type.String(),
  same_currency: Type.Boolean(),
  dates: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }), valid: Type.Boolean() })),
  earliest_valid: Type.String({ description: 'YYYY-MM-DD' }),
}, { title: 'ConversionDates',
  examples: [{
    settlement_currency: 'USD', payout_currency: 'EUR', same_currency: false, earliest_valid: '2025-12-24',
    dates: [
      { date: '2025-12-23', valid: false }, { date: '2025-12-24', valid: true }, { date: '2025-12-25', valid: false }, { date: '2025-12-26', valid: false },
      { date: '2025-12-27', valid: false }, { date: '2025-12-28', valid: false }, { date: '2025-12-29', valid: true },
    ],
  }],
});

export const RemittanceBody = Type.Object({
  payee_id: Type.String({ minLength: 1, maxLength: 100, description: 'pye_<number> (prefix optional) of one of the member\'s payees' }),
  source_asset: Type.String({ minLength: 1, maxLength: 16, description: 'The asset debited; converted to the payout currency when it differs' }),
  source_amount: Type.String({ minLength: 1, maxLength: 40, description: 'Decimal string at the source asset\'s scale; the fee is charged on top' }),
}, { examples: [{ payee_id: 'pye_3141592653589793', source_asset: 'USDT', source_amount: '250.00' }] });

export const Remittance = Type.Object({
  id: Type.String({ description: 'rmt_<uuid>' }),
  payee_id: Type.String(),
  member_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('returned')], {
    description: '`pending` (funds frozen, not yet with the provider), `processing` (with the provider), `completed` (paid out), `failed` (freeze released in full), `returned` (paid out, then returned by the beneficiary bank: the amount is back in available, the fee is kept)',
  }),
  status_version: Type.Integer({ description: 'Increases with each status; merge `remittance.order.*` webhook events forward by it' }),
  source_asset: Type.String(),
  source_amount: Type.String(),
  fee: Type.String({ description: 'In the source asset, on top of source_amount' }),
  payout_currency: Type.String(),
  payout_amount: Type.String({ description: 'source_amount × rate, rounded down' }),
  rate: Type.String({ description: 'Payout units per source unit applied (mid less the spread, rounded down to 10 places); 1 when no conversion' }),
  payout_date: Nullable(Type.String({ description: 'YYYY-MM-DD: the provider\'s payout day (an estimate until dispatch)' })),
  failure_reason: Nullable(Type.String({ description: 'When failed: `upstream_rejected`, `payee_rejected`, `upstream_not_found`, `upstream_failed`, `operator`' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'RemittanceOrder',
  examples: [{
    id: 'rmt_6b1d3c2a-8f0e-4e55-9a7b-1c2d3e4f5a6b', payee_id: 'pye_3141592653589793', member_id: 'mem_0d7e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a', status: 'pending', status_version: 1,
    source_asset: 'USDT', source_amount: '250.000000', fee: '2.333250', payout_currency: 'EUR', payout_amount: '230.78', rate: '0.9231481481',
    payout_date: '2026-01-05', failure_reason: null, created_at: '2026-01-05T09:00:00.000Z', updated_at: '2026-01-05T09:00:00.000Z',
  }],
});

export const RemittanceIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'rmt_ prefix optional' }) });
