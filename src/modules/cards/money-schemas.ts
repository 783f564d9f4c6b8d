/** Route schemas of a card's money (top-up quotes, top-ups, transactions): the single source for validation, types and OpenAPI. */
import { Type } from 'typebox';
import { OperatorEnvironment } from '../../platform/operator-route.js';
import { declineReasons } from './money-rules.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const TopUpBody = Type.Object({
  amount: Type.String({ minLength: 1, maxLength: 80, description: 'Base amount in the source asset\'s decimal form; the fee is added on top (`customer_total`)' }),
  source_asset: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'A preference: replaced by the member\'s payment priority when delisted or not in the product\'s list; read `source_asset` in the answer' })),
}, { title: 'CardTopupRequest' });

export const TopUpQuote = Type.Object({
  customer_total: Type.String({ description: 'Smallest-unit integer string, scale `ledger_scale`: amount + fee' }),
  arrival_amount: Type.String({ description: 'Smallest-unit integer string, scale `card_scale`; cross-currency estimated 1:1' }),
  fee: Type.String({ description: 'Smallest-unit integer string, scale `ledger_scale`' }),
  source_asset: Type.String({ description: 'The asset that will really be charged' }),
  ledger_scale: Type.Integer({ description: 'Scale of the source asset' }),
  card_currency: Type.String(),
  card_scale: Type.Integer({ description: 'Scale of the card currency' }),
  note: Type.String({ description: 'Human text; cross-currency arrival is final only at execution' }),
}, { title: 'CardTopupQuote' });

export const CardTopUp = Type.Object({
  id: Type.String({ description: '`ctu_<uuid>`' }),
  card_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('processing'), Type.Literal('credited'), Type.Literal('failed')], {
    description: '`pending` (frozen, waiting for dispatch), `processing` (with the card issuer; also while its outcome is unknown), `credited` (the issuer confirmed: money on the card; webhook `card.topup.credited`), `failed` (amount + fee back to available; webhook `card.topup.failed`)',
  }),
  status_version: Type.Integer({ description: 'Increases with each status; merge webhook events forward by it' }),
  source_asset: Type.String(),
  amount: Type.String({ description: 'Decimal in the source asset' }),
  fee: Type.String({ description: 'Decimal in the source asset' }),
  customer_total: Type.String({ description: 'amount + fee, decimal in the source asset: what left the available balance' }),
  card_currency: Type.String(),
  arrival_amount: Type.String({ description: 'Decimal in the card currency, at the rate fixed at creation' }),
  failure_reason: Nullable(Type.String({ description: '`upstream_rejected`, `upstream_not_found`, `upstream_failed`, `upstream_reversed`, `operator`; never sent because the card stopped first: `card_closing`, `card_closed`, `card_replaced`, `card_expired`, `card_frozen`, `card_replacing`' })),
  created_at: Type.String(),
  credited_at: Nullable(Type.String()),
  updated_at: Type.String(),
}, { title: 'CardTopup' });

/** The operator's view of a top-up (`GET /admin/v1/cards/topups/{id}`): the merchant's fields and the provider facts. */
export const OperatorCardTopUp = Type.Object({
  ...CardTopUp.properties,
  merchant_id: Type.String(),
  environment: OperatorEnvironment,
  member_id: Type.String(),
  internal_status: Type.String({ description: 'The stored status: the public ones and `suspended` (reconciliation gave up; the operator resolves it), which the merchant reads as `processing`' }),
  rate: Type.String({ description: 'The real rate fixed at creation (mid less the product\'s markup; `1` for the same currency)' }),
  upstream_outcome: Type.String({ description: '`none`, `pending`, `accepted`, `timeout` or `unknown`: what the issuer\'s answer to the call said' }),
  provider_order_id: Nullable(Type.String()),
  provider_status: Nullable(Type.String({ description: 'The issuer\'s last status, as it said it' })),
  check_count: Type.Integer({ description: 'Status queries made so far' }),
  next_check_at: Nullable(Type.String({ format: 'date-time' })),
  last_checked_at: Nullable(Type.String({ format: 'date-time' })),
}, { title: 'OperatorCardTopup' });

export const TopUpParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 80, description: 'Card id; `crd_` prefix optional' }),
  topup_id: Type.String({ minLength: 1, maxLength: 80, description: '`ctu_` prefix optional' }),
});

export const CardTransaction = Type.Object({
  id: Type.String({ description: '`ctx_<uuid>`' }),
  card_id: Type.String(),
  type: Type.Union([Type.Literal('authorization'), Type.Literal('clearing'), Type.Literal('reversal'), Type.Literal('refund')]),
  status: Type.Union([Type.Literal('approved'), Type.Literal('declined'), Type.Literal('cleared'), Type.Literal('reversed'), Type.Literal('posted')], {
    description: 'Authorisations: `approved` (held), `declined`, then `cleared` or `reversed` (by the network, or its hold expired: `reversal_reason`). Clearings, reversals, refunds: `posted`',
  }),
  status_version: Type.Integer(),
  amount: Type.String({ description: 'Decimal in `currency`' }),
  currency: Type.String(),
  merchant_name: Type.String({ description: 'As in the network message; what merchant rules match (trimmed, case-insensitive)' }),
  mcc: Type.String(),
  decline_reason: Nullable(Type.String({ description: declineReasons.map((r) => `\`${r}\``).join(', ') })),
  authorization_id: Nullable(Type.String({ description: 'Clearing, reversal, refund: the authorisation they follow' })),
  cleared_amount: Nullable(Type.String({ description: 'Authorisations: the amount cleared' })),
  refunded_amount: Nullable(Type.String({ description: 'Authorisations: the amount refunded so far' })),
  reversed_amount: Nullable(Type.String({ description: 'Authorisations: what partial reversals and the expiry released of the hold (held = amount − reversed_amount while `approved`)' })),
  expires_at: Nullable(Type.String({ description: 'Authorisations approved: when the hold is released if neither cleared nor reversed (merchant clock; 7 days, 30 for lodging, vehicle rental and cruise MCCs)' })),
  reversal_reason: Nullable(Type.Union([Type.Literal('network'), Type.Literal('expired')], {
    description: 'Reversals (and an authorisation fully released): `network` (the network reversed it) or `expired` (ours: the hold expired unused)',
  })),
  created_at: Type.String(),
}, { title: 'CardTransaction' });

export const TransactionsQuery = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal('authorization'), Type.Literal('clearing'), Type.Literal('reversal'), Type.Literal('refund')])),
});

export const AuthorizationBody = Type.Object({
  amount: Type.String({ minLength: 1, maxLength: 80, description: 'Decimal in the card currency' }),
  currency: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'Defaults to the card currency; another one is declined (`currency_not_supported`)' })),
  merchant_name: Type.String({ minLength: 1, maxLength: 100 }),
  mcc: Type.String({ pattern: '^[0-9]{4}$', description: 'Four-digit ISO 18245 MCC' }),
}, { title: 'SandboxCardAuthorizationRequest' });

export const AuthorizationAnswer = Type.Object({
  approved: Type.Boolean(),
  decline_reason: Type.Optional(Type.String({ description: declineReasons.map((r) => `\`${r}\``).join(', ') })),
  transaction_id: Type.String(),
}, { title: 'SandboxCardAuthorization' });

export const FollowBody = Type.Object({
  transaction_id: Type.String({ minLength: 1, maxLength: 80, description: 'The authorisation (`ctx_…`)' }),
  amount: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Decimal in the card currency' })),
}, { title: 'SandboxCardNetworkEventRequest' });
