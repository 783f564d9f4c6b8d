import type { QrPayOrderStatus, QrPayUpstreamOutcome } from './tables.js';
import type { CallOutcome, StatusOutcome } from '../../upstreams/port.js';
import {
  decideOnCallAnswer,
  decideOnQueryAnswer,
  openOrderStatuses,
  recheckDelayMs,
  type UpstreamAlertKind,
} from '../../provider-orders/index.js';

/**
 * The QR payment order state machine (pure; the provider-answer rules are the shared ones of
 * src/provider-orders/lifecycle.ts). Our states:
 *
 *   processing ──complete──▶ completed ──refund──▶ refunded
 *        │  ╲──fail──▶ failed
 *        └──suspend──▶ suspended ──complete / fail──▶ (as above)
 *
 * `processing` carries what the provider last told us (`upstream_outcome`): `pending` while the
 * payment call is in flight, `accepted` once the provider has it, `timeout` / `unknown` when the
 * call's outcome is unknown. `suspended` is ours: the provider answered a state outside our
 * enumeration; callers still see `processing` (it is not a failure) and an operator is alerted.
 */

export type FailureReason = 'upstream_rejected' | 'upstream_not_found' | 'upstream_failed' | 'operator';
export type PublicStatus = 'processing' | 'completed' | 'failed' | 'refunded';

export type Decision =
  | { kind: 'complete'; providerOrderId?: string; providerStatus?: string }
  /** The provider already refunded a payment we still had open: complete, then refund. */
  | { kind: 'complete_and_refund'; providerOrderId?: string; providerStatus?: string }
  | { kind: 'fail'; reason: FailureReason; providerOrderId?: string; providerStatus?: string }
  | { kind: 'suspend'; alertKind: UpstreamAlertKind; providerOrderId?: string; providerStatus: string }
  /** Stays open; records what the provider said. */
  | { kind: 'wait'; outcome: QrPayUpstreamOutcome; providerOrderId?: string; providerStatus?: string }
  /** Nothing learnt (the query itself failed, or nothing changes). */
  | { kind: 'none' };

export const openStatuses: readonly QrPayOrderStatus[] = openOrderStatuses;

export function isOpen(status: QrPayOrderStatus): boolean {
  return openStatuses.includes(status);
}

export function publicStatus(status: QrPayOrderStatus): PublicStatus {
  return status === 'suspended' ? 'processing' : status;
}

/** What the answer of the payment call means for a new order (the shared rules, provider-orders/lifecycle.ts). */
export function decideOnCall(answer: CallOutcome): Decision {
  return decideOnCallAnswer(answer, 'complete_and_refund');
}

export interface OrderFacts {
  status: QrPayOrderStatus;
  upstreamOutcome: QrPayUpstreamOutcome;
  /** Milliseconds since the payment call started. */
  callAgeMs: number;
}

/** What a status query's answer means for an open order (the shared rules, provider-orders/lifecycle.ts). */
export function decideOnQuery(order: OrderFacts, answer: StatusOutcome, notFoundGraceMs: number): Decision {
  return decideOnQueryAnswer(order, answer, notFoundGraceMs, 'complete_and_refund');
}

export { recheckDelayMs };
