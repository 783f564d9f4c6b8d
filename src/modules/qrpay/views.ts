/** What callers and operators see of an order (pure). */
import { formatStored } from '../../money/index.js';
import { publicStatus } from './state.js';
import type { QrOrderRow } from './tables.js';
import { isoOrNull } from '../../platform/dates.js';
import { providerFactsView } from '../../provider-orders/index.js';

export function orderView(o: QrOrderRow, scale: number) {
  return {
    id: o.id,
    status: publicStatus(o.status),
    status_version: o.status_version,
    member_id: o.member_id,
    scheme: o.scheme,
    merchant_name: o.merchant_name,
    merchant_city: o.merchant_city,
    country: o.country,
    asset: o.asset,
    amount: formatStored(o.amount, scale),
    note: o.note,
    failure_reason: o.failure_reason,
    created_at: new Date(o.created_at).toISOString(),
    updated_at: new Date(o.updated_at).toISOString(),
  };
}

/** The operator's view: the public one plus our internal state and the provider's side. */
export function operatorOrderView(o: QrOrderRow, scale: number) {
  return {
    ...orderView(o, scale),
    merchant_id: o.merchant_id,
    environment: o.environment,
    internal_status: o.status,
    upstream: 'qrpay',
    ...providerFactsView(o),
    call_started_at: isoOrNull(o.call_started_at)!,
    next_check_at: isoOrNull(o.next_check_at),
    last_checked_at: isoOrNull(o.last_checked_at),
    completed_at: isoOrNull(o.completed_at),
    failed_at: isoOrNull(o.failed_at),
    refunded_at: isoOrNull(o.refunded_at),
  };
}
