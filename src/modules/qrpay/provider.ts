import type { Environment } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import type { CallContext, CallOutcome, StatusOutcome } from '../../upstreams/port.js';
import type { QrCheckOutcome } from '../../upstreams/qrpay/port.js';
import { withDeadline } from '../../upstreams/deadline.js';
import { orderCallInFlight } from '../../provider-orders/index.js';
import type { QrOrderRow } from './tables.js';
import { rowScope } from '../../db/owned-by.js';

/** How QR pay calls its provider: for whom, under which deadline, and whether a call is still running. */

export const callOf = (
  o: { merchantId: string; environment: Environment } | { merchant_id: string; environment: Environment },
): CallContext => ('merchantId' in o ? { merchantId: o.merchantId, environment: o.environment } : rowScope(o));

/** Every provider call runs under the configured deadline (see withDeadline). */
export function safely<T extends CallOutcome | StatusOutcome | QrCheckOutcome>(
  ctx: ServiceContext,
  call: () => Promise<T>,
) {
  return withDeadline(ctx.config.upstreamCallTimeoutMs, call);
}

/**
 * Whether the order's payment call may still be running (its deadline has not passed). Real time,
 * not the merchant's clock: it is about a network call in flight, which an advance does not end.
 */
export function callInFlight(ctx: ServiceContext, order: QrOrderRow): boolean {
  return orderCallInFlight(ctx, order, order.call_started_at);
}
