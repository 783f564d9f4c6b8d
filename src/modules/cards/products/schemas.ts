import { Type } from 'typebox';
import { OperatorEnvironment } from '../../../platform/routes/operator-route.js';

/** Route schemas of card products (the merchant's and the operator's view). The single source for validation, types and
 * OpenAPI. */

export const CardProduct = Type.Object(
  {
    id: Type.String({ description: '`cpd_<number>`; passed as `product_id`' }),
    form_factor: Type.String(),
    currency: Type.String(),
    bin: Type.String(),
    scheme: Type.String(),
    card_types: Type.Array(Type.String()),
  },
  { title: 'CardProduct' },
);

/** The operator's view of a product: every setting, amounts as decimal strings in the card currency. */
export const OperatorCardProduct = Type.Object(
  {
    ...CardProduct.properties,
    environment: OperatorEnvironment,
    source_assets: Type.Array(Type.String(), { description: 'Assets a card of the product is funded from' }),
    opening_fee: Type.String(),
    topup_min: Type.String(),
    topup_max_single: Type.String(),
    max_single: Type.String({ description: "Cap of a card's single limit" }),
    max_daily: Type.String(),
    max_monthly: Type.String(),
    billing_address_updatable: Type.Boolean(),
    card_lists_supported: Type.Boolean({ description: 'Whether card-level merchant and MCC lists are offered' }),
    enabled: Type.Boolean(),
    replacement_fee: Type.String({ description: 'Charged on a security replacement' }),
    postage_fee: Type.String({ description: 'Charged with it for a physical card' }),
  },
  { title: 'OperatorCardProduct' },
);
