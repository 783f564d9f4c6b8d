import { formatStored } from '../../../money/index.js';
import { productId } from '../products/queries.js';
import { type Db } from '../shared/queries.js';
import type { CardProductRow } from '../products/tables.js';
import type { CardRow } from './tables.js';
import { productOfCard } from './queries.js';
import { isoOrNull } from '../../../platform/dates.js';
import { assetScale } from '../../assets/index.js';

/**
 * The full card record: never the card number or the CVV (the issuer keeps them; the hosted
 * reveal screen shows them to the member alone). Limits are decimal strings in the card
 * currency, `"0"` meaning no limit at that layer.
 */
export async function cardView(db: Db, c: CardRow, product?: CardProductRow) {
  const p = product ?? (await productOfCard(db, c));
  const scale = await assetScale(db, c.currency);
  const amount = (v: string) => formatStored(v, scale);
  return {
    id: c.id,
    status: c.status,
    status_version: c.status_version,
    product_id: productId(c.product_seq),
    form_factor: c.form_factor,
    currency: c.currency,
    scheme: p.scheme,
    last4: c.last4,
    exp_month: c.exp_month,
    exp_year: c.exp_year,
    billing_address: c.billing_address,
    billing_address_updatable: p.billing_address_updatable,
    cvv_blocked: c.cvv_blocked,
    locked_until: isoOrNull(c.locked_until),
    inventory_status: c.inventory_status,
    limits: { single: amount(c.limit_single), daily: amount(c.limit_daily), monthly: amount(c.limit_monthly) },
    limits_sync: c.limits_sync,
    application_id: c.application_id,
    activated_at: isoOrNull(c.activated_at),
    created_at: isoOrNull(c.created_at)!,
    frozen: c.frozen_at !== null,
    replaces: c.replaces,
    replaced_by: c.replaced_by,
  };
}
