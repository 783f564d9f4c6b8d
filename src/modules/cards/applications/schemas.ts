import { Type } from 'typebox';
import { Nullable } from '../../../platform/routes/route-kinds.js';
import { AddressSchema } from '../shared/schemas.js';

/** Route schemas of card applications. The single source for validation, types and OpenAPI. */

export const CardApplication = Type.Object(
  {
    id: Type.String({ description: '`cap_<uuid>`' }),
    status: Type.String({ description: '`pending` (issuer review), `need_docs`, `approved`, `rejected`, `failed`' }),
    status_version: Type.Integer(),
    product_id: Type.String(),
    source_asset: Type.String(),
    opening_fee: Type.String({
      description:
        'Decimal in the source asset; frozen on creation, charged on approval, refunded on rejection or failure',
    }),
    supplement: Nullable(
      Type.Object({
        status: Type.String({ description: '`pending` or `submitted`' }),
        expires_at: Nullable(Type.String()),
      }),
    ),
    card_id: Nullable(Type.String()),
    created_at: Type.String(),
  },
  { title: 'CardApplication' },
);

export const ApplicationBody = Type.Object({
  product_id: Type.String({ minLength: 1, maxLength: 40 }),
  source_asset: Type.String({ minLength: 1, maxLength: 16 }),
  shipping_address: Type.Optional(AddressSchema),
});

export const AdvanceBody = Type.Object({
  to: Type.Union([Type.Literal('need_docs'), Type.Literal('approved'), Type.Literal('rejected')]),
});
