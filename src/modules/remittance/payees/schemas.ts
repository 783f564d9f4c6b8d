/** The payee routes' TypeBox schemas, with the examples the OpenAPI document shows. */
import { Type } from 'typebox';
import { idParams, Nullable } from '../../../platform/routes/route-kinds.js';

const segment = (description: string) => Type.Optional(Type.String({ description }));

export const PayeeBody = Type.Object(
  {
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
    fields: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Flat map of contract keys (with dots, not nested) to string values; other keys are dropped',
      }),
    ),
  },
  {
    examples: [
      {
        country_code: 'DE',
        currency: 'EUR',
        payment_method: 'LOCAL',
        clearing_system: 'SEPA',
        entity_type: 'INDIVIDUAL',
        nickname: 'Anna (Berlin)',
        fields: {
          first_name: 'Anna',
          last_name: 'Müller',
          'bank_details.iban': 'DE89 3704 0044 0532 0130 00',
          'address.country': 'DE',
          'address.city': 'Berlin',
          'address.street_address': 'Unter den Linden 1',
          'address.postal_code': '10117',
        },
      },
    ],
  },
);

export const PayeeCreated = Type.Object(
  {
    id: Type.String({ description: 'pye_<number>: an opaque number, in no order (docs/remittance.md)' }),
    outcome: Type.Union([Type.Literal('created'), Type.Literal('linked'), Type.Literal('review')]),
    status: Type.Literal('active'),
  },
  { examples: [{ id: 'pye_3141592653589793', outcome: 'created', status: 'active' }] },
);

export const PayeeIdParams = idParams('pye_ prefix optional');

export const Payee = Type.Object(
  {
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
    fields: Type.Record(Type.String(), Type.String(), {
      description: 'Normalised contract values; account numbers, IBANs and proxies masked',
    }),
    outcome: Type.String({ description: 'How the link was made: `created`, `linked`, `review`' }),
    name_mismatch: Type.Boolean({
      description: "The holder name differed from the shared payee's when linked (`review`)",
    }),
    name_check: Nullable(
      Type.Object({
        result: Type.String({ description: '`match`, `close_match`, `no_match`, `unavailable`' }),
        suggested_name: Nullable(Type.String()),
        checked_at: Type.String({ format: 'date-time' }),
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Payee',
    examples: [
      {
        id: 'pye_3141592653589793',
        status: 'active',
        nickname: 'Anna (Berlin)',
        favorite: true,
        country_code: 'DE',
        currency: 'EUR',
        payment_method: 'LOCAL',
        clearing_system: 'SEPA',
        entity_type: 'INDIVIDUAL',
        holder_name: 'Anna Müller',
        account_identifier: 'DE************3000',
        fields: {
          first_name: 'Anna',
          last_name: 'Müller',
          'bank_details.iban': 'DE************3000',
          'address.country': 'DE',
          'address.city': 'Berlin',
          'address.street_address': 'Unter den Linden 1',
          'address.postal_code': '10117',
        },
        outcome: 'created',
        name_mismatch: false,
        name_check: { result: 'match', suggested_name: null, checked_at: '2026-01-05T10:00:00.000Z' },
        created_at: '2026-01-05T09:59:00.000Z',
        updated_at: '2026-01-05T10:00:00.000Z',
      },
    ],
  },
);

export const PayeeUpdated = Type.Object(
  {
    id: Type.String(),
    nickname: Type.String({ description: 'Private to the member; empty when none' }),
    favorite: Type.Boolean(),
  },
  { examples: [{ id: 'pye_3141592653589793', nickname: 'Mum', favorite: true }] },
);

export const NameCheck = Type.Object(
  {
    id: Type.String(),
    result: Type.Union([
      Type.Literal('match'),
      Type.Literal('close_match'),
      Type.Literal('no_match'),
      Type.Literal('unavailable'),
    ]),
    suggested_name: Nullable(Type.String({ description: 'With `close_match`: the name the bank holds' })),
    checked_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'PayeeNameCheck',
    examples: [
      {
        id: 'pye_3141592653589793',
        result: 'close_match',
        suggested_name: 'Max Mustermann',
        checked_at: '2026-01-05T10:00:00.000Z',
      },
    ],
  },
);
