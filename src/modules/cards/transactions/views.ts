import { formatStored } from '../../../money/index.js';
import { type Db } from '../shared/queries.js';
import type { CardTransactionRow } from './tables.js';
import { cardCurrencyOf } from '../cards/queries.js';
import { iso } from '../../../platform/dates.js';
import { assetScale } from '../../assets/index.js';

/** A card transaction as the API answers it: amounts in the decimal form of its currency (the card's when outside the
 * catalogue). */

export async function transactionView(db: Db, row: CardTransactionRow) {
  const scale = (await assetScale(db, row.currency).catch(() => undefined)) ?? (await cardScaleOf(db, row.card_id));
  return {
    id: row.id,
    card_id: row.card_id,
    type: row.type,
    status: row.status,
    status_version: row.status_version,
    amount: formatStored(row.amount, scale),
    currency: row.currency,
    merchant_name: row.merchant_name,
    mcc: row.mcc,
    decline_reason: row.decline_reason,
    authorization_id: row.authorization_id,
    cleared_amount: row.type === 'authorization' ? formatStored(row.cleared_amount, scale) : null,
    refunded_amount: row.type === 'authorization' ? formatStored(row.refunded_amount, scale) : null,
    reversed_amount: row.type === 'authorization' ? formatStored(row.reversed_amount, scale) : null,
    expires_at: row.type === 'authorization' && row.expires_at !== null ? iso(row.expires_at) : null,
    reversal_reason: row.reversal_reason,
    created_at: iso(row.created_at),
  };
}

async function cardScaleOf(db: Db, cardId: string): Promise<number> {
  const card = await cardCurrencyOf(db, cardId);
  return assetScale(db, card.currency);
}
