import { formatStored } from '../../../money/index.js';
import { productId } from '../products/queries.js';
import { type Db } from '../shared/queries.js';
import type { CardApplicationRow } from './tables.js';
import { isoOrNull } from '../../../platform/dates.js';
import { assetScale } from '../../assets/index.js';

/** A card application (extensions 10, extended): the opening fee in its source asset's decimal form. */
export async function applicationView(db: Db, a: CardApplicationRow) {
  return {
    id: a.id,
    status: a.status,
    status_version: a.status_version,
    product_id: productId(a.product_seq),
    source_asset: a.source_asset,
    opening_fee: formatStored(a.fee, await assetScale(db, a.source_asset)),
    supplement:
      a.supplement_status === null
        ? null
        : { status: a.supplement_status, expires_at: isoOrNull(a.supplement_expires_at) },
    card_id: a.card_id,
    created_at: isoOrNull(a.created_at)!,
  };
}
