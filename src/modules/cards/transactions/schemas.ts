/** Route schemas of card transactions and their sandbox network messages: the single source for validation, types and
 * OpenAPI. */
import { Type } from 'typebox';
import { Nullable } from '../../../platform/routes/route-kinds.js';
import { declineReasons } from './rules.js';

export const CardTransaction = Type.Object(
  {
    id: Type.String({ description: '`ctx_<uuid>`' }),
    card_id: Type.String(),
    type: Type.Union([
      Type.Literal('authorization'),
      Type.Literal('clearing'),
      Type.Literal('reversal'),
      Type.Literal('refund'),
    ]),
    status: Type.Union(
      [
        Type.Literal('approved'),
        Type.Literal('declined'),
        Type.Literal('cleared'),
        Type.Literal('reversed'),
        Type.Literal('posted'),
      ],
      {
        description:
          'Authorisations: `approved` (held), `declined`, then `cleared` or `reversed` (by the network, or ' +
          'its hold expired: `reversal_reason`). Clearings, reversals, refunds: `posted`',
      },
    ),
    status_version: Type.Integer(),
    amount: Type.String({ description: 'Decimal in `currency`' }),
    currency: Type.String(),
    merchant_name: Type.String({
      description: 'As in the network message; what merchant rules match (trimmed, case-insensitive)',
    }),
    mcc: Type.String(),
    decline_reason: Nullable(Type.String({ description: declineReasons.map((r) => `\`${r}\``).join(', ') })),
    authorization_id: Nullable(
      Type.String({ description: 'Clearing, reversal, refund: the authorisation they follow' }),
    ),
    cleared_amount: Nullable(Type.String({ description: 'Authorisations: the amount cleared' })),
    refunded_amount: Nullable(Type.String({ description: 'Authorisations: the amount refunded so far' })),
    reversed_amount: Nullable(
      Type.String({
        description:
          'Authorisations: what partial reversals and the expiry released of the hold (held = amount − ' +
          'reversed_amount while `approved`)',
      }),
    ),
    expires_at: Nullable(
      Type.String({
        description:
          'Authorisations approved: when the hold is released if neither cleared nor reversed (merchant ' +
          'clock; 7 days, 30 for lodging, vehicle rental and cruise MCCs)',
      }),
    ),
    reversal_reason: Nullable(
      Type.Union([Type.Literal('network'), Type.Literal('expired')], {
        description:
          'Reversals (and an authorisation fully released): `network` (the network reversed it) or `expired` ' +
          '(ours: the hold expired unused)',
      }),
    ),
    created_at: Type.String(),
  },
  { title: 'CardTransaction' },
);

export const TransactionsQuery = Type.Object({
  type: Type.Optional(
    Type.Union([
      Type.Literal('authorization'),
      Type.Literal('clearing'),
      Type.Literal('reversal'),
      Type.Literal('refund'),
    ]),
  ),
});

export const AuthorizationBody = Type.Object(
  {
    amount: Type.String({ minLength: 1, maxLength: 80, description: 'Decimal in the card currency' }),
    currency: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16,
        description: 'Defaults to the card currency; another one is declined (`currency_not_supported`)',
      }),
    ),
    merchant_name: Type.String({ minLength: 1, maxLength: 100 }),
    mcc: Type.String({ pattern: '^[0-9]{4}$', description: 'Four-digit ISO 18245 MCC' }),
  },
  { title: 'SandboxCardAuthorizationRequest' },
);

export const AuthorizationAnswer = Type.Object(
  {
    approved: Type.Boolean(),
    decline_reason: Type.Optional(Type.String({ description: declineReasons.map((r) => `\`${r}\``).join(', ') })),
    transaction_id: Type.String(),
  },
  { title: 'SandboxCardAuthorization' },
);

export const FollowBody = Type.Object(
  {
    transaction_id: Type.String({ minLength: 1, maxLength: 80, description: 'The authorisation (`ctx_…`)' }),
    amount: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Decimal in the card currency' })),
  },
  { title: 'SandboxCardNetworkEventRequest' },
);
