import { Type } from 'typebox';
import { PageQuery } from '../../../platform/routes/pagination.js';
import { Nullable } from '../../../platform/routes/route-kinds.js';

/** Route schemas of card replacements. The single source for validation, types and OpenAPI. */

export const ReplacementReasonSchema = Type.Union(
  [
    ...[
      'pan_leaked',
      'stolen',
      'pin_locked',
      'damaged',
      'user_request',
      'expiring',
      'lost_in_transit',
      'not_received',
      'production_error',
      'name_error',
    ].map((r) => Type.Literal(r)),
  ],
  {
    description:
      'Security reasons: `pan_leaked`, `stolen`, `pin_locked`, `damaged`, `user_request`, `expiring`. ' +
      'Non-security reasons (card never activated): `lost_in_transit`, `not_received`, `production_error`, ' +
      '`name_error`. Any other value: `invalid_request` (the reference answers 500)',
  },
);

export const ReplacementBody = Type.Object({
  reason: ReplacementReasonSchema,
  // No length bound: the reference truncates a longer note, it never refuses one (the body limit bounds it).
  note: Type.Optional(Type.String({ description: 'Kept to its first 200 characters (the reference truncates)' })),
});

export const ReplacementCreated = Type.Object(
  {
    id: Type.String({ description: '`crp_<uuid>`' }),
    status: Type.Literal('requested'),
  },
  { title: 'CardReplacementRequested' },
);

export const Replacement = Type.Object(
  {
    id: Type.String({ description: '`crp_<uuid>`' }),
    status: Type.String({
      description:
        '`requested` (created; nothing moved), `processing` (the executor took it: card frozen, balance ' +
        'returned, fees reserved for a security reason; inventory row voided otherwise), `completed` (new ' +
        'card issued, old card `replaced`, fees charged), `failed` (see `failure_reason`; reserved fees ' +
        'released)',
    }),
    status_version: Type.Integer(),
    card_id: Type.String({ description: 'The card being replaced' }),
    reason: Type.String(),
    security: Type.Boolean({ description: 'Whether `reason` is a security reason' }),
    note: Nullable(Type.String()),
    fees: Nullable(
      Type.Object(
        {
          asset: Type.String({ description: 'The source asset the fees are taken in' }),
          replacement: Type.String({ description: 'Decimal in `asset`' }),
          postage: Type.String({ description: 'Decimal in `asset`; physical cards only' }),
        },
        {
          description:
            'Reserved by the executor (null before, and for non-security reasons); charged on completion, ' +
            'released on failure',
        },
      ),
    ),
    returned_amount: Type.String({
      description: 'What went from the card back to the available balance, decimal in the card currency',
    }),
    new_card_id: Nullable(Type.String({ description: 'The new card (`crd_<uuid>`), once completed' })),
    failure_reason: Nullable(
      Type.String({
        description:
          '`insufficient_balance` (fees), `issuer_refused`, `card_activated`, `card_closed`, `card_closing`, ' +
          '`card_expired`, `card_replaced`',
      }),
    ),
    created_at: Type.String(),
    completed_at: Nullable(Type.String({ description: 'When it became `completed` or `failed`' })),
  },
  { title: 'CardReplacement' },
);

export const ReplacementListQuery = Type.Object({
  ...PageQuery.properties,
  card_id: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: "Only this card's replacements" })),
});
