import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../../../upstreams/port.js';
import {
  decideOnCallAnswer,
  decideOnQueryAnswer,
  openOrderStatuses,
  recheckDelayMs,
  type UpstreamAlertKind,
} from '../../../provider-orders/index.js';
import type { RemitOrderStatus, RemitUpstreamOutcome } from './tables.js';

/**
 * The remittance order state machine (pure; the provider-answer rules are the shared ones of
 * src/provider-orders/lifecycle.ts). Our states:
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

export type FailureReason =
  'upstream_rejected' | 'payee_rejected' | 'upstream_not_found' | 'upstream_failed' | 'operator';
export type PublicStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'returned';

export const publicStatuses: readonly PublicStatus[] = ['pending', 'processing', 'completed', 'failed', 'returned'];
export const openStatuses: readonly RemitOrderStatus[] = openOrderStatuses;

export type Decision =
  | { kind: 'complete'; providerOrderId?: string; providerStatus?: string; payoutDate?: string }
  /** The provider already returned a payout we still had open: complete, then return. */
  | { kind: 'complete_and_return'; providerOrderId?: string; providerStatus?: string }
  | { kind: 'return'; providerStatus?: string }
  | { kind: 'fail'; reason: FailureReason; providerOrderId?: string; providerStatus?: string }
  | { kind: 'suspend'; alertKind: UpstreamAlertKind; providerOrderId?: string; providerStatus: string }
  /** Stays open; records what the provider said. */
  | {
      kind: 'wait';
      outcome: RemitUpstreamOutcome;
      providerOrderId?: string;
      providerStatus?: string;
      payoutDate?: string;
    }
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
export const movesFrom: Readonly<
  Record<'processing' | 'completed' | 'failed' | 'returned', readonly RemitOrderStatus[]>
> = {
  processing: ['pending'],
  completed: openStatuses,
  failed: ['pending', ...openStatuses],
  returned: ['completed'],
};

/** What the answer of the payout call means for an order just dispatched (the shared rules, plus the payout date). */
export function decideOnCall(answer: CallOutcome<{ payout_date?: string }>): Decision {
  const d = decideOnCallAnswer(answer, 'complete_and_return');
  const payoutDate = answer.kind === 'accepted' ? answer.detail.payout_date || undefined : undefined;
  return (d.kind === 'wait' || d.kind === 'complete') && payoutDate ? { ...d, payoutDate } : d;
}

export interface OrderFacts {
  status: RemitOrderStatus;
  upstreamOutcome: RemitUpstreamOutcome;
  /** Milliseconds since the payout call started. */
  callAgeMs: number;
}

/** What a status query's answer means for an open order (the shared rules, provider-orders/lifecycle.ts). */
export function decideOnQuery(order: OrderFacts, answer: StatusOutcome, notFoundGraceMs: number): Decision {
  return decideOnQueryAnswer(order, answer, notFoundGraceMs, 'complete_and_return');
}

/** A completed order re-read after the provider reported a return. */
export function decideOnReturnCheck(status: RemitOrderStatus, answer: StatusOutcome): Decision {
  if (status !== 'completed' || answer.kind !== 'found') return { kind: 'none' };
  return providerStatusOf(answer.status) === 'refunded'
    ? { kind: 'return', providerStatus: answer.status }
    : { kind: 'none' };
}

/** When a completed order is asked about for a return (return-watch.ts), from its completion: 1 h, 1, 3, 7, 14 and 30
 * days. */
export const returnCheckOffsetsSeconds: readonly number[] = [
  3_600,
  86_400,
  3 * 86_400,
  7 * 86_400,
  14 * 86_400,
  30 * 86_400,
];

/** The next return check after `checksDone` questions, in seconds from completion (undefined: watched no more). */
export function nextReturnCheckOffset(checksDone: number): number | undefined {
  return returnCheckOffsetsSeconds[checksDone];
}

export { recheckDelayMs };
