import type { QrPayOrderStatus, QrPayUpstreamOutcome } from './tables.js';
import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../upstreams/types.js';

/**
 * The QR payment order state machine (pure). Our states:
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
  | { kind: 'suspend'; alertKind: 'upstream.unknown_status' | 'upstream.order_missing'; providerOrderId?: string; providerStatus: string }
  /** Stays open; records what the provider said. */
  | { kind: 'wait'; outcome: QrPayUpstreamOutcome; providerOrderId?: string; providerStatus?: string }
  /** Nothing learnt (the query itself failed, or nothing changes). */
  | { kind: 'none' };

export const openStatuses: readonly QrPayOrderStatus[] = ['processing', 'suspended'];

export function isOpen(status: QrPayOrderStatus): boolean {
  return openStatuses.includes(status);
}

export function publicStatus(status: QrPayOrderStatus): PublicStatus {
  return status === 'suspended' ? 'processing' : status;
}

/** What the answer of the payment call means for a new order. */
export function decideOnCall(answer: CallOutcome): Decision {
  switch (answer.kind) {
    case 'rejected':
      return { kind: 'fail', reason: 'upstream_rejected' };
    case 'timeout':
      return { kind: 'wait', outcome: 'timeout' };
    case 'unknown':
      return { kind: 'wait', outcome: 'unknown' };
    case 'accepted':
      return fromProviderStatus(answer.providerOrderId, answer.status, 'processing');
  }
}

export interface OrderFacts {
  status: QrPayOrderStatus;
  upstreamOutcome: QrPayUpstreamOutcome;
  /** Milliseconds since the payment call started. */
  callAgeMs: number;
}

/**
 * What a status query's answer means for an open order. A `not_found` is taken as "the provider
 * never received the payment" only once the call is older than `notFoundGraceMs` (a request still
 * in flight could land later) and only if the provider never acknowledged it; a missing order it
 * had accepted is an anomaly for the operator.
 */
export function decideOnQuery(order: OrderFacts, answer: StatusOutcome, notFoundGraceMs: number): Decision {
  if (!isOpen(order.status)) return { kind: 'none' };
  switch (answer.kind) {
    case 'timeout':
    case 'unknown':
      return { kind: 'none' };
    case 'not_found':
      if (order.callAgeMs < notFoundGraceMs) return { kind: 'none' };
      if (order.upstreamOutcome === 'accepted') {
        return order.status === 'suspended' ? { kind: 'none' } : { kind: 'suspend', alertKind: 'upstream.order_missing', providerStatus: 'not_found' };
      }
      return { kind: 'fail', reason: 'upstream_not_found' };
    case 'found':
      return fromProviderStatus(answer.providerOrderId, answer.status, order.status);
  }
}

function fromProviderStatus(providerOrderId: string, raw: string, current: QrPayOrderStatus): Decision {
  const status = providerStatusOf(raw);
  switch (status) {
    case 'succeeded':
      return { kind: 'complete', providerOrderId, providerStatus: raw };
    case 'failed':
      return { kind: 'fail', reason: 'upstream_failed', providerOrderId, providerStatus: raw };
    case 'refunded':
      return { kind: 'complete_and_refund', providerOrderId, providerStatus: raw };
    case 'processing':
      return { kind: 'wait', outcome: 'accepted', providerOrderId, providerStatus: raw };
    case undefined:
      // Already suspended: the same answer again changes nothing (the alert was raised once).
      if (current === 'suspended') return { kind: 'wait', outcome: 'accepted', providerOrderId, providerStatus: raw };
      return { kind: 'suspend', alertKind: 'upstream.unknown_status', providerOrderId, providerStatus: raw };
  }
}

/** Delay before the next re-query of an open order: base·2^(checks-1), capped; base 0 means at once. */
export function recheckDelayMs(checks: number, baseMs: number, maxMs: number): number {
  if (baseMs <= 0) return 0;
  const exponent = Math.min(Math.max(0, checks - 1), 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}
