/** A card top-up as callers see it (docs/cards.md "Card money"). */
import { formatAmount, formatStored, minorFromDb } from '../../../money/index.js';
import { isoOrNull } from '../../../platform/dates.js';
import { type Db } from '../shared/queries.js';
import type { CardTopupRow, TopUpStatus } from './tables.js';
import { assetScale } from '../../assets/index.js';

export type PublicTopUpStatus = 'pending' | 'processing' | 'credited' | 'failed';
export const publicTopUpStatus = (s: TopUpStatus): PublicTopUpStatus => (s === 'suspended' ? 'processing' : s);

/** A top-up as callers see it: decimal strings (source asset, card currency); the rate (and so the markup) is not
 * shown. */
export async function topUpView(db: Db, row: CardTopupRow) {
  const sourceScale = await assetScale(db, row.source_asset);
  const cardScale = await assetScale(db, row.card_currency);
  const amount = minorFromDb(row.amount);
  const fee = minorFromDb(row.fee);
  return {
    id: row.id,
    card_id: row.card_id,
    status: publicTopUpStatus(row.status),
    status_version: row.status_version,
    source_asset: row.source_asset,
    amount: formatAmount(amount, sourceScale),
    fee: formatAmount(fee, sourceScale),
    customer_total: formatAmount(amount + fee, sourceScale),
    card_currency: row.card_currency,
    arrival_amount: formatStored(row.arrival_amount, cardScale),
    failure_reason: row.failure_reason,
    created_at: isoOrNull(row.created_at)!,
    credited_at: isoOrNull(row.credited_at),
    updated_at: isoOrNull(row.updated_at)!,
  };
}
