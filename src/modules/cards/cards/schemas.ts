import { Type } from 'typebox';
import { expiryShape } from './rules.js';
import { Nullable } from '../../../platform/routes/route-kinds.js';
import { AddressSchema } from '../shared/schemas.js';

/** Route schemas of the card record and its activation. The single source for validation, types and OpenAPI. */

export const Card = Type.Object(
  {
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
    locked_until: Nullable(
      Type.String({ description: 'End of the activation lock after 3 failures (ISO 8601); null when not locked' }),
    ),
    inventory_status: Nullable(
      Type.String({ description: 'Physical cards: `in_production`, `shipped`, `binding`, `bound`, `voided`' }),
    ),
    limits: Type.Object(
      { single: Type.String(), daily: Type.String(), monthly: Type.String() },
      { description: 'Card currency; `"0"` = no limit. What is recorded (a failed push keeps only tightening)' },
    ),
    limits_sync: Type.String({
      description:
        '`pending` while the limits are pushed to the issuer, `synced` when it confirmed them, `failed` when ' +
        'it did not (only tightening kept)',
    }),
    application_id: Type.String({
      description:
        'The application that opened the card, or the card it replaces (a replacement card keeps its ' +
        "lineage's application)",
    }),
    activated_at: Nullable(Type.String()),
    created_at: Type.String(),
    frozen: Type.Boolean({
      description: 'true once a security replacement froze the card: it spends nothing (docs/cards.md)',
    }),
    replaces: Nullable(Type.String({ description: 'The card this one replaces (`crd_<uuid>`)' })),
    replaced_by: Nullable(
      Type.String({ description: 'The card that replaced this one, once the replacement completed' }),
    ),
  },
  { title: 'Card' },
);

export const ActivateBody = Type.Object({
  expiry: Type.String({ pattern: expiryShape, description: '`MM/YY` as printed on the card' }),
  pin: Type.String({ pattern: '^[0-9]{4,12}$', description: 'Never stored or logged by the service' }),
});
