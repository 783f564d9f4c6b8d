/** What callers see of a remittance order (pure): the response of every order route. */
import { formatStored } from '../../../money/index.js';
import type { PayeeIds } from '../payees/payee-ids.js';
import { publicStatus } from './state.js';
import type { RemitOrderRow } from './tables.js';
import { isoOrNull } from '../../../platform/dates.js';

export function orderView(ids: PayeeIds, o: RemitOrderRow, sourceScale: number, payoutScale: number) {
  return {
    id: o.id,
    payee_id: ids.idOf(o.payee_seq),
    member_id: o.member_id,
    status: publicStatus(o.status),
    status_version: o.status_version,
    source_asset: o.source_asset,
    source_amount: formatStored(o.source_amount, sourceScale),
    fee: formatStored(o.fee, sourceScale),
    payout_currency: o.payout_currency,
    payout_amount: formatStored(o.payout_amount, payoutScale),
    rate: o.rate,
    payout_date: o.payout_date,
    failure_reason: o.failure_reason,
    created_at: isoOrNull(o.created_at)!,
    updated_at: isoOrNull(o.updated_at)!,
  };
}
