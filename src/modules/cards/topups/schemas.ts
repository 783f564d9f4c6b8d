/** Route schemas of card top-ups (quotes, top-ups, the operator's view): the single source for validation, types and
 * OpenAPI. */
import { Type } from 'typebox';
import { Nullable } from '../../../platform/routes/route-kinds.js';
import { OperatorEnvironment } from '../../../platform/routes/operator-route.js';

export const TopUpBody = Type.Object(
  {
    amount: Type.String({
      minLength: 1,
      maxLength: 80,
      description: "Base amount in the source asset's decimal form; the fee is added on top (`customer_total`)",
    }),
    source_asset: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16,
        description:
          "A preference: replaced by the member's payment priority when delisted or not in the product's " +
          'list; read `source_asset` in the answer',
      }),
    ),
  },
  { title: 'CardTopupRequest' },
);

export const TopUpQuote = Type.Object(
  {
    customer_total: Type.String({ description: 'Smallest-unit integer string, scale `ledger_scale`: amount + fee' }),
    arrival_amount: Type.String({
      description: 'Smallest-unit integer string, scale `card_scale`; cross-currency estimated 1:1',
    }),
    fee: Type.String({ description: 'Smallest-unit integer string, scale `ledger_scale`' }),
    source_asset: Type.String({ description: 'The asset that will really be charged' }),
    ledger_scale: Type.Integer({ description: 'Scale of the source asset' }),
    card_currency: Type.String(),
    card_scale: Type.Integer({ description: 'Scale of the card currency' }),
    note: Type.String({ description: 'Human text; cross-currency arrival is final only at execution' }),
  },
  { title: 'CardTopupQuote' },
);

export const CardTopUp = Type.Object(
  {
    id: Type.String({ description: '`ctu_<uuid>`' }),
    card_id: Type.String(),
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('processing'), Type.Literal('credited'), Type.Literal('failed')],
      {
        description:
          '`pending` (frozen, waiting for dispatch), `processing` (with the card issuer; also while its ' +
          'outcome is unknown), `credited` (the issuer confirmed: money on the card; webhook ' +
          '`card.topup.credited`), `failed` (amount + fee back to available; webhook `card.topup.failed`)',
      },
    ),
    status_version: Type.Integer({ description: 'Increases with each status; merge webhook events forward by it' }),
    source_asset: Type.String(),
    amount: Type.String({ description: 'Decimal in the source asset' }),
    fee: Type.String({ description: 'Decimal in the source asset' }),
    customer_total: Type.String({
      description: 'amount + fee, decimal in the source asset: what left the available balance',
    }),
    card_currency: Type.String(),
    arrival_amount: Type.String({ description: 'Decimal in the card currency, at the rate fixed at creation' }),
    failure_reason: Nullable(
      Type.String({
        description:
          '`upstream_rejected`, `upstream_not_found`, `upstream_failed`, `upstream_reversed`, `operator`; ' +
          'never sent because the card stopped first: `card_closing`, `card_closed`, `card_replaced`, ' +
          '`card_expired`, `card_frozen`, `card_replacing`',
      }),
    ),
    created_at: Type.String(),
    credited_at: Nullable(Type.String()),
    updated_at: Type.String(),
  },
  { title: 'CardTopup' },
);

/** The operator's view of a top-up (`GET /admin/v1/cards/topups/{id}`): the merchant's fields and the provider facts.
 * */
export const OperatorCardTopUp = Type.Object(
  {
    ...CardTopUp.properties,
    merchant_id: Type.String(),
    environment: OperatorEnvironment,
    member_id: Type.String(),
    internal_status: Type.String({
      description:
        'The stored status: the public ones and `suspended` (reconciliation gave up; the operator resolves ' +
        'it), which the merchant reads as `processing`',
    }),
    rate: Type.String({
      description: "The real rate fixed at creation (mid less the product's markup; `1` for the same currency)",
    }),
    upstream_outcome: Type.String({
      description: "`none`, `pending`, `accepted`, `timeout` or `unknown`: what the issuer's answer to the call said",
    }),
    provider_order_id: Nullable(Type.String()),
    provider_status: Nullable(Type.String({ description: "The issuer's last status, as it said it" })),
    check_count: Type.Integer({ description: 'Status queries made so far' }),
    next_check_at: Nullable(Type.String({ format: 'date-time' })),
    last_checked_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'OperatorCardTopup' },
);

export const TopUpParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 80, description: 'Card id; `crd_` prefix optional' }),
  topup_id: Type.String({ minLength: 1, maxLength: 80, description: '`ctu_` prefix optional' }),
});
