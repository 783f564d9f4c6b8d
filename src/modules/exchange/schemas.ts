/** The exchange routes' schemas (TypeBox): quotes, orders, merchant conversions and their pairs. */
import { Type } from 'typebox';
import { idParams, Nullable } from '../../platform/routes/route-kinds.js';

export const tags = ['Exchange'];
const Amount = (description: string) => Type.String({ maxLength: 64, description });
const AssetCode = (description: string) => Type.String({ maxLength: 16, description });

export const QuoteBody = Type.Object({
  from_asset: AssetCode('Asset sold; case-insensitive, converted to upper case'),
  to_asset: AssetCode('Asset bought; must differ from `from_asset`'),
  from_amount: Amount(
    "Fixed-point with the from-asset's `ledger_scale` places; more places with a non-zero tail are rejected, " +
      'never rounded',
  ),
  lock: Type.Optional(
    Type.Unknown({
      description:
        'JSON boolean, default false; anything else is `invalid_fields`. `true` locks the price: the quote ' +
        'is an exchange order in state `quoted`',
    }),
  ),
});

export const Quote = Type.Object(
  {
    from_asset: Type.String(),
    to_asset: Type.String(),
    from_amount: Type.String({ description: 'With `ledger_scale_from` places' }),
    to_amount: Type.String({ description: 'Net amount received, with `ledger_scale_to` places' }),
    rate: Type.String({
      description: "Units of to-asset per from unit: mid less the direction's spread, rounded down to 10 places",
    }),
    fee_amount: Type.String(),
    fee_asset: Type.String({ description: 'The from-side or the to-side asset, per direction; never assume either' }),
    quote_id: Type.Optional(
      Type.String({ description: '`exc_<uuid>`; present only when `lock` was true (absent, not null, otherwise)' }),
    ),
    quote_expires_at: Type.Optional(Type.String({ description: 'ISO 8601; present only when `lock` was true' })),
    quote_ttl_sec: Type.Integer({
      description: "Always present: the lock window when locked, otherwise the direction's reference value",
    }),
    ledger_scale_from: Type.Integer(),
    ledger_scale_to: Type.Integer(),
  },
  { title: 'ExchangeQuote' },
);

/** The priced amounts an exchange order and a merchant conversion both answer, in this order. */
const pricedAmounts = {
  from_asset: Type.String(),
  to_asset: Type.String(),
  from_amount: Type.String(),
  to_amount: Type.String(),
  rate: Type.String(),
  fee_amount: Type.String(),
  fee_asset: Type.String(),
  ledger_scale_from: Type.Integer(),
  ledger_scale_to: Type.Integer(),
};

export const ExchangeOrder = Type.Object(
  {
    id: Type.String({ description: "`exc_<uuid>`; a locked quote's id is its order id" }),
    type: Type.Union([Type.Literal('locked'), Type.Literal('market')]),
    status: Type.String({
      description:
        '`quoted` (a lock), `completed` (executed), `expired` (a lock unused when its window ended; no money moved)',
    }),
    status_version: Type.Integer(),
    ...pricedAmounts,
    quote_expires_at: Nullable(Type.String()),
    executed_at: Nullable(Type.String()),
    expired_at: Nullable(Type.String()),
    created_at: Type.String(),
  },
  { title: 'ExchangeOrder' },
);

export const OrderBody = Type.Object({
  quote_id: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        "Executes this locked quote at its numbers; the fields below may be sent with it only as the quote's " +
        'own (otherwise `invalid_request`)',
    }),
  ),
  from_asset: Type.Optional(AssetCode("Market order: asset sold (with `quote_id`: the quote's)")),
  to_asset: Type.Optional(AssetCode("Market order: asset bought (with `quote_id`: the quote's)")),
  from_amount: Type.Optional(
    Amount("Market order: amount sold (with `quote_id`: the quote's, compared at the asset's scale)"),
  ),
});

export const ConversionBody = Type.Object({
  from_asset: AssetCode("Asset sold from the merchant's prepaid balance"),
  to_asset: AssetCode("Asset bought into the merchant's prepaid balance"),
  from_amount: Amount("Fixed-point with the from-asset's scale"),
  quote_id: Type.Optional(Type.Unknown({ description: 'Not supported: any value gives `quote_lock_unsupported`' })),
});

export const Conversion = Type.Object(
  {
    id: Type.String({ description: '`cnv_<uuid>`' }),
    status: Type.Literal('completed'),
    ...pricedAmounts,
    created_at: Type.String(),
  },
  { title: 'MerchantConversion' },
);

export const ConversionPair = Type.Object(
  {
    from_asset: Type.String(),
    to_asset: Type.String(),
    fee_asset: Type.String(),
    fee_bps: Type.Integer(),
    fee_fixed: Type.String(),
    min_amount: Type.String(),
    max_amount: Nullable(Type.String()),
    ledger_scale_from: Type.Integer(),
    ledger_scale_to: Type.Integer(),
  },
  { title: 'ConversionPair' },
);

export const IdParams = idParams('`exc_` prefix optional');
