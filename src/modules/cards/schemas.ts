import { Type } from 'typebox';
import { expiryShape } from './rules.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const AddressSchema = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 200 }),
  city: Type.String({ minLength: 1, maxLength: 100 }),
  state: Type.Optional(Type.String({ maxLength: 100 })),
  country: Type.String({ description: 'ISO 3166-1 alpha-2, upper case' }),
  postal_code: Type.String({ minLength: 1, maxLength: 20 }),
});

export const CardProduct = Type.Object({
  id: Type.String({ description: '`cpd_<number>`; passed as `product_id`' }),
  form_factor: Type.String(),
  currency: Type.String(),
  bin: Type.String(),
  scheme: Type.String(),
  card_types: Type.Array(Type.String()),
});

export const CardApplication = Type.Object({
  id: Type.String({ description: '`cap_<uuid>`' }),
  status: Type.String({ description: '`pending` (issuer review), `need_docs`, `approved`, `rejected`, `failed`' }),
  status_version: Type.Integer(),
  product_id: Type.String(),
  source_asset: Type.String(),
  opening_fee: Type.String({ description: 'Decimal in the source asset; frozen on creation, charged on approval, refunded on rejection or failure' }),
  supplement: Nullable(Type.Object({ status: Type.String({ description: '`pending` or `submitted`' }), expires_at: Nullable(Type.String()) })),
  card_id: Nullable(Type.String()),
  created_at: Type.String(),
});

export const Card = Type.Object({
  id: Type.String({ description: '`crd_<uuid>`' }),
  status: Type.String({ description: '`unactivated`, `active`, `closing`, `closed`, `expired`, `replaced`' }),
  status_version: Type.Integer(),
  product_id: Type.String(),
  form_factor: Type.String(),
  currency: Type.String(),
  scheme: Type.String(),
  last4: Type.String(),
  exp_month: Type.Integer(),
  exp_year: Type.Integer(),
  billing_address: Nullable(AddressSchema),
  billing_address_updatable: Type.Boolean(),
  cvv_blocked: Type.Boolean(),
  locked_until: Nullable(Type.String({ description: 'End of the activation lock after 3 failures (ISO 8601); null when not locked' })),
  inventory_status: Nullable(Type.String({ description: 'Physical cards: `in_production`, `shipped`, `binding`, `bound`, `voided`' })),
  limits: Type.Object({ single: Type.String(), daily: Type.String(), monthly: Type.String() }, { description: 'Card currency; `"0"` = no limit' }),
  application_id: Type.String(),
  activated_at: Nullable(Type.String()),
  created_at: Type.String(),
});

export const ApplicationBody = Type.Object({
  product_id: Type.String({ minLength: 1, maxLength: 40 }),
  source_asset: Type.String({ minLength: 1, maxLength: 16 }),
  shipping_address: Type.Optional(AddressSchema),
});

export const ActivateBody = Type.Object({
  expiry: Type.String({ pattern: expiryShape, description: '`MM/YY` as printed on the card' }),
  pin: Type.String({ pattern: '^[0-9]{4,12}$', description: 'Never stored or logged by the service' }),
});

export const AdvanceBody = Type.Object({
  to: Type.Union([Type.Literal('need_docs'), Type.Literal('approved'), Type.Literal('rejected')]),
});

export const Ticket = Type.Object({ id: Type.String(), hosted_url: Type.String(), expires_at: Type.Integer() });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 80 }) });
