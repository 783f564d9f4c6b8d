import { Type } from 'typebox';
import { OperatorEnvironment } from '../../platform/operator-route.js';
import { PageQuery } from '../../platform/pagination.js';
import { expiryShape } from './cards/rules.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const AddressSchema = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 200 }),
  city: Type.String({ minLength: 1, maxLength: 100 }),
  state: Type.Optional(Type.String({ maxLength: 100 })),
  country: Type.String({ description: 'ISO 3166-1 alpha-2, upper case' }),
  postal_code: Type.String({ minLength: 1, maxLength: 20 }),
}, { title: 'BillingAddress' });

export const CardProduct = Type.Object({
  id: Type.String({ description: '`cpd_<number>`; passed as `product_id`' }),
  form_factor: Type.String(),
  currency: Type.String(),
  bin: Type.String(),
  scheme: Type.String(),
  card_types: Type.Array(Type.String()),
}, { title: 'CardProduct' });

/** The operator's view of a product: every setting, amounts as decimal strings in the card currency. */
export const OperatorCardProduct = Type.Object({
  ...CardProduct.properties,
  environment: OperatorEnvironment,
  source_assets: Type.Array(Type.String(), { description: 'Assets a card of the product is funded from' }),
  opening_fee: Type.String(),
  topup_min: Type.String(),
  topup_max_single: Type.String(),
  max_single: Type.String({ description: 'Cap of a card\'s single limit' }),
  max_daily: Type.String(),
  max_monthly: Type.String(),
  billing_address_updatable: Type.Boolean(),
  card_lists_supported: Type.Boolean({ description: 'Whether card-level merchant and MCC lists are offered' }),
  enabled: Type.Boolean(),
  replacement_fee: Type.String({ description: 'Charged on a security replacement' }),
  postage_fee: Type.String({ description: 'Charged with it for a physical card' }),
}, { title: 'OperatorCardProduct' });

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
}, { title: 'CardApplication' });

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
  limits: Type.Object({ single: Type.String(), daily: Type.String(), monthly: Type.String() }, { description: 'Card currency; `"0"` = no limit. What is recorded (a failed push keeps only tightening)' }),
  limits_sync: Type.String({ description: '`pending` while the limits are pushed to the issuer, `synced` when it confirmed them, `failed` when it did not (only tightening kept)' }),
  application_id: Type.String({ description: 'The application that opened the card, or the card it replaces (a replacement card keeps its lineage\'s application)' }),
  activated_at: Nullable(Type.String()),
  created_at: Type.String(),
  frozen: Type.Boolean({ description: 'true once a security replacement froze the card: it spends nothing (docs/cards.md)' }),
  replaces: Nullable(Type.String({ description: 'The card this one replaces (`crd_<uuid>`)' })),
  replaced_by: Nullable(Type.String({ description: 'The card that replaced this one, once the replacement completed' })),
}, { title: 'Card' });

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

export const Ticket = Type.Object({ id: Type.String(), hosted_url: Type.String(), expires_at: Type.Integer() }, { title: 'CardScreenTicket' });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 80 }) });

const Decimal = Type.String({ minLength: 1, maxLength: 40, description: 'Decimal in the card currency; `0` = no limit at that layer' });

export const LimitsBody = Type.Object({ single: Type.Optional(Decimal), daily: Type.Optional(Decimal), monthly: Type.Optional(Decimal) });

export const MerchantRulesBody = Type.Object({
  rule_type: Type.String({ description: '`white` (only listed spending allowed) or `black` (listed spending refused)' }),
  merchant_names: Type.Optional(Type.Array(Type.String(), { description: 'Up to 200; empty means no name matching' })),
  mcc_list: Type.Optional(Type.Array(Type.String(), { description: 'Up to 200 four-digit ISO 18245 codes' })),
});

export const MerchantRules = Type.Object({
  id: Type.String({ description: 'The card id' }),
  rule_type: Type.Union([Type.Literal('white'), Type.Literal('black'), Type.Null()], { description: '`white` (only listed spending allowed) or `black` (listed spending refused); null: no rules' }),
  merchant_names: Type.Array(Type.String()),
  mcc_list: Type.Array(Type.String()),
  synced: Type.Boolean({ description: 'true = the issuer confirmed this set' }),
  synced_at: Nullable(Type.String({ format: 'date-time', description: 'ISO 8601 with milliseconds: the last confirmation; null while no set was ever confirmed' })),
}, { title: 'CardMerchantRules' });

/** Required fields are checked by `addressProblems`, so that every missing one is answered in `fields` (`invalid_fields`). */
export const BillingAddressBody = Type.Object({
  address: Type.Optional(Type.String({ maxLength: 200, description: 'Required' })),
  city: Type.Optional(Type.String({ maxLength: 100, description: 'Required' })),
  state: Type.Optional(Type.String({ maxLength: 100, description: 'Omit where the country has none' })),
  country: Type.Optional(Type.String({ maxLength: 8, description: 'Required; ISO 3166-1 alpha-2, upper case (only the shape is checked)' })),
  postal_code: Type.Optional(Type.String({ maxLength: 20, description: 'Required' })),
});

// ---------------------------------------------------------------------------------------------
// Replacement and closing (replacements.ts, closing.ts)

export const ReplacementReasonSchema = Type.Union([
  ...['pan_leaked', 'stolen', 'pin_locked', 'damaged', 'user_request', 'expiring', 'lost_in_transit', 'not_received', 'production_error', 'name_error']
    .map((r) => Type.Literal(r)),
], { description: 'Security reasons: `pan_leaked`, `stolen`, `pin_locked`, `damaged`, `user_request`, `expiring`. Non-security reasons (card never activated): `lost_in_transit`, `not_received`, `production_error`, `name_error`. Any other value: `invalid_request` (the reference answers 500)' });

export const ReplacementBody = Type.Object({
  reason: ReplacementReasonSchema,
  // No length bound: the reference truncates a longer note, it never refuses one (the body limit bounds it).
  note: Type.Optional(Type.String({ description: 'Kept to its first 200 characters (the reference truncates)' })),
});

export const ReplacementCreated = Type.Object({
  id: Type.String({ description: '`crp_<uuid>`' }),
  status: Type.Literal('requested'),
}, { title: 'CardReplacementRequested' });

export const Replacement = Type.Object({
  id: Type.String({ description: '`crp_<uuid>`' }),
  status: Type.String({ description: '`requested` (created; nothing moved), `processing` (the executor took it: card frozen, balance returned, fees reserved for a security reason; inventory row voided otherwise), `completed` (new card issued, old card `replaced`, fees charged), `failed` (see `failure_reason`; reserved fees released)' }),
  status_version: Type.Integer(),
  card_id: Type.String({ description: 'The card being replaced' }),
  reason: Type.String(),
  security: Type.Boolean({ description: 'Whether `reason` is a security reason' }),
  note: Nullable(Type.String()),
  fees: Nullable(Type.Object({
    asset: Type.String({ description: 'The source asset the fees are taken in' }),
    replacement: Type.String({ description: 'Decimal in `asset`' }),
    postage: Type.String({ description: 'Decimal in `asset`; physical cards only' }),
  }, { description: 'Reserved by the executor (null before, and for non-security reasons); charged on completion, released on failure' })),
  returned_amount: Type.String({ description: 'What went from the card back to the available balance, decimal in the card currency' }),
  new_card_id: Nullable(Type.String({ description: 'The new card (`crd_<uuid>`), once completed' })),
  failure_reason: Nullable(Type.String({ description: '`insufficient_balance` (fees), `issuer_refused`, `card_activated`, `card_closed`, `card_closing`, `card_expired`, `card_replaced`' })),
  created_at: Type.String(),
  completed_at: Nullable(Type.String({ description: 'When it became `completed` or `failed`' })),
}, { title: 'CardReplacement' });

export const CloseResult = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('closing'), Type.Literal('closed')], { description: '`closed` when the issuer confirmed at once; `closing` while its answer is pending' }),
});

export const ReplacementListQuery = Type.Object({
  ...PageQuery.properties,
  card_id: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Only this card\'s replacements' })),
});
