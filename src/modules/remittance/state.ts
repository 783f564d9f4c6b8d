import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../upstreams/types.js';
import type { RemitOrderStatus, RemitUpstreamOutcome } from './tables.js';

/**
 * The remittance order state machine (pure). Our states:
 *
 *   pending ──dispatch──▶ processing ──complete──▶ completed ──return──▶ returned
 *      │                     │  ╲──fail──▶ failed
 *      └──fail──▶ failed     └──suspend──▶ suspended ──complete / fail──▶ (as above)
 *
 * `pending`: created and frozen, waiting for the dispatch job. `processing`: handed to the
 * provider; `upstream_outcome` says what it last told us (`pending` while the call is in flight,
 * `accepted`, or `timeout` / `unknown`: outcome unknown, never refunded on that alone).
 * `suspended` is ours: the provider answered a state outside our enumeration; callers still see
 * `processing`, an operator is alerted. `failed` releases the freeze; `returned` gives the amount
 * back after completion.
 */

export type FailureReason = 'upstream_rejected' | 'payee_rejected' | 'upstream_not_found' | 'upstream_failed' | 'operator';
export type PublicStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'returned';

export const publicStatuses: readonly PublicStatus[] = ['pending', 'processing', 'completed', 'failed', 'returned'];
export const openStatuses: readonly RemitOrderStatus[] = ['processing', 'suspended'];

export type Decision =
  | { kind: 'complete'; providerOrderId?: string; providerStatus?: string; payoutDate?: string }
  /** The provider already returned a payout we still had open: complete, then return. */
  | { kind: 'complete_and_return'; providerOrderId?: string; providerStatus?: string }
  | { kind: 'return'; providerStatus?: string }
  | { kind: 'fail'; reason: FailureReason; providerOrderId?: string; providerStatus?: string }
  | { kind: 'suspend'; alertKind: 'upstream.unknown_status' | 'upstream.order_missing'; providerOrderId?: string; providerStatus: string }
  /** Stays open; records what the provider said. */
  | { kind: 'wait'; outcome: RemitUpstreamOutcome; providerOrderId?: string; providerStatus?: string; payoutDate?: string }
  | { kind: 'none' };

export function isOpen(status: RemitOrderStatus): boolean {
  return openStatuses.includes(status);
}

export function publicStatus(status: RemitOrderStatus): PublicStatus {
  return status === 'suspended' ? 'processing' : status;
}

/** Internal statuses behind a public one (the list filter). */
export function statusesOf(s: PublicStatus): RemitOrderStatus[] {
  return s === 'processing' ? ['processing', 'suspended'] : [s];
}

/** Which moves each target status may be reached from (the claims' WHERE). */
export const movesFrom: Readonly<Record<'processing' | 'completed' | 'failed' | 'returned', readonly RemitOrderStatus[]>> = {
  processing: ['pending'],
  completed: openStatuses,
  failed: ['pending', ...openStatuses],
  returned: ['completed'],
};

/** What the answer of the payout call means for an order just dispatched. */
export function decideOnCall(answer: CallOutcome<{ payout_date?: string }>): Decision {
  switch (answer.kind) {
    case 'rejected':
      return { kind: 'fail', reason: 'upstream_rejected' };
    case 'timeout':
      return { kind: 'wait', outcome: 'timeout' };
    case 'unknown':
      return { kind: 'wait', outcome: 'unknown' };
    case 'accepted': {
      const payoutDate = answer.detail.payout_date || undefined;
      const d = fromProviderStatus(answer.providerOrderId, answer.status, 'processing');
      return (d.kind === 'wait' || d.kind === 'complete') && payoutDate ? { ...d, payoutDate } : d;
    }
  }
}

export interface OrderFacts {
  status: RemitOrderStatus;
  upstreamOutcome: RemitUpstreamOutcome;
  /** Milliseconds since the payout call started. */
  callAgeMs: number;
}

/**
 * What a status query's answer means for an open order. `not_found` means "never received" only
 * after `notFoundGraceMs` and only if the provider never acknowledged the payout; a missing
 * payout it had accepted is an anomaly for the operator. A query that fails teaches nothing.
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

/** A completed order re-read after the provider reported a return. */
export function decideOnReturnCheck(status: RemitOrderStatus, answer: StatusOutcome): Decision {
  if (status !== 'completed' || answer.kind !== 'found') return { kind: 'none' };
  return providerStatusOf(answer.status) === 'refunded' ? { kind: 'return', providerStatus: answer.status } : { kind: 'none' };
}

function fromProviderStatus(providerOrderId: string, raw: string, current: RemitOrderStatus): Decision {
  switch (providerStatusOf(raw)) {
    case 'succeeded':
      return { kind: 'complete', providerOrderId, providerStatus: raw };
    case 'failed':
      return { kind: 'fail', reason: 'upstream_failed', providerOrderId, providerStatus: raw };
    case 'refunded':
      return { kind: 'complete_and_return', providerOrderId, providerStatus: raw };
    case 'processing':
      return { kind: 'wait', outcome: 'accepted', providerOrderId, providerStatus: raw };
    case undefined:
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
