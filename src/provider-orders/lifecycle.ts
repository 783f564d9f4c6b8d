/**
 * The lifecycle every area shares for an order handed to a provider (QR payments, remittance
 * payouts, card top-ups next), as pure rules: what the provider's answer to the call, or to a
 * later status query, means for the order. Each area keeps its own states around this core (its
 * table, ledger entries and events) and names its own "the provider already reversed it" decision
 * (`complete_and_refund`, `complete_and_return`, …).
 *
 *   processing ──complete──▶ completed ──reverse──▶ (refunded / returned)
 *        │  ╲──fail──▶ failed
 *        └──suspend──▶ suspended ──complete / fail──▶ (as above)
 *
 * `processing` carries what the provider last told us (`upstream_outcome`): `pending` while the
 * call is in flight, `accepted` once the provider has it, `timeout` / `unknown` when the call's
 * outcome is unknown (never failed on that alone). `suspended` is ours: the provider answered a
 * state outside our enumeration; callers still see `processing` and an operator is alerted.
 */
import { providerStatusOf, type CallOutcome, type StatusOutcome } from '../upstreams/port.js';

/** The statuses in which an order waits for the provider (re-queried by reconciliation). */
export const openOrderStatuses = ['processing', 'suspended'] as const;
export type OpenOrderStatus = (typeof openOrderStatuses)[number];

export function isOpenOrder(status: string): status is OpenOrderStatus {
  return (openOrderStatuses as readonly string[]).includes(status);
}

/** Re-queries after which an order still open raises one `upstream.reconciliation_stalled` alert. */
export const reconcileStalledAfterChecks = 20;

export type UpstreamAlertKind = 'upstream.unknown_status' | 'upstream.order_missing';
export type LifecycleFailureReason = 'upstream_rejected' | 'upstream_not_found' | 'upstream_failed';
export type LifecycleOutcome = 'accepted' | 'timeout' | 'unknown';

/** What the provider said of an order, recorded on it (only the facts given). */
export interface ProviderFacts {
  providerOrderId?: string;
  providerStatus?: string;
}

/** A decision of the shared rules; `Reverse` is the area's name for "complete, then reverse". */
export type LifecycleDecision<Reverse extends string> =
  | ({ kind: 'complete' } & ProviderFacts)
  /** The provider already reversed (refunded, returned) an order we still had open. */
  | ({ kind: Reverse } & ProviderFacts)
  | ({ kind: 'fail'; reason: LifecycleFailureReason } & ProviderFacts)
  | { kind: 'suspend'; alertKind: UpstreamAlertKind; providerOrderId?: string; providerStatus: string }
  /** Stays open; records what the provider said. */
  | ({ kind: 'wait'; outcome: LifecycleOutcome } & ProviderFacts)
  /** Nothing learnt (the query itself failed, or nothing changes). */
  | { kind: 'none' };

/** What the answer of the provider call means for an order just handed over. */
export function decideOnCallAnswer<Reverse extends string>(
  answer: CallOutcome<unknown>,
  reverse: Reverse,
): LifecycleDecision<Reverse> {
  switch (answer.kind) {
    case 'rejected':
      return { kind: 'fail', reason: 'upstream_rejected' };
    case 'timeout':
      return { kind: 'wait', outcome: 'timeout' };
    case 'unknown':
      return { kind: 'wait', outcome: 'unknown' };
    case 'accepted':
      return fromProviderStatus(answer.providerOrderId, answer.status, 'processing', reverse);
  }
}

export interface OpenOrderFacts {
  status: string;
  /** What the provider last told us (`upstream_outcome`). */
  upstreamOutcome: string;
  /** Milliseconds since the provider call started. */
  callAgeMs: number;
}

/**
 * What a status query's answer means for an open order. A `not_found` is taken as "the provider
 * never received it" only once the call is older than `notFoundGraceMs` (a request still in
 * flight could land later) and only if the provider never acknowledged it; a missing order it had
 * accepted is an anomaly for the operator. A query that fails teaches nothing.
 */
export function decideOnQueryAnswer<Reverse extends string>(
  order: OpenOrderFacts,
  answer: StatusOutcome,
  notFoundGraceMs: number,
  reverse: Reverse,
): LifecycleDecision<Reverse> {
  if (!isOpenOrder(order.status)) return { kind: 'none' };
  switch (answer.kind) {
    case 'timeout':
    case 'unknown':
      return { kind: 'none' };
    case 'not_found':
      if (order.callAgeMs < notFoundGraceMs) return { kind: 'none' };
      if (order.upstreamOutcome === 'accepted') {
        return order.status === 'suspended'
          ? { kind: 'none' }
          : { kind: 'suspend', alertKind: 'upstream.order_missing', providerStatus: 'not_found' };
      }
      return { kind: 'fail', reason: 'upstream_not_found' };
    case 'found':
      return fromProviderStatus(answer.providerOrderId, answer.status, order.status, reverse);
  }
}

function fromProviderStatus<Reverse extends string>(
  providerOrderId: string,
  raw: string,
  current: OpenOrderStatus,
  reverse: Reverse,
): LifecycleDecision<Reverse> {
  switch (providerStatusOf(raw)) {
    case 'succeeded':
      return { kind: 'complete', providerOrderId, providerStatus: raw };
    case 'failed':
      return { kind: 'fail', reason: 'upstream_failed', providerOrderId, providerStatus: raw };
    case 'refunded':
      return { kind: reverse, providerOrderId, providerStatus: raw };
    case 'processing':
      return { kind: 'wait', outcome: 'accepted', providerOrderId, providerStatus: raw };
    case undefined:
      // Already suspended: the same answer again changes nothing (the alert was raised once).
      if (current === 'suspended') return { kind: 'wait', outcome: 'accepted', providerOrderId, providerStatus: raw };
      return { kind: 'suspend', alertKind: 'upstream.unknown_status', providerOrderId, providerStatus: raw };
  }
}

/**
 * What an operator's resolve of an open order does, given what the provider answered to a status
 * query made just before it (`decideOnQueryAnswer`). The provider decides whether money moved:
 * - it gives the outcome (succeeded, failed, reversed, or never received past the grace): that
 *   outcome is applied, as reconciliation would apply it, whatever the operator asked;
 * - it reports the order still in progress: refused, the order settles when the provider does
 *   (failing it by hand could refund money the provider then pays out);
 * - it cannot tell (no answer, an answer outside its statuses, the order missing within the
 *   grace or after it was accepted): the operator's decision is applied. This is what a resolve
 *   is for.
 */
export type OperatorResolution<D> =
  { kind: 'provider'; decision: D } | { kind: 'in_progress'; providerStatus?: string } | { kind: 'operator' };

export function resolveByOperator<D extends { kind: string; providerStatus?: string }>(
  providerDecision: D,
): OperatorResolution<D> {
  switch (providerDecision.kind) {
    case 'none':
    case 'suspend':
      return { kind: 'operator' };
    case 'wait': {
      const { providerStatus } = providerDecision;
      return providerStatus !== undefined && providerStatusOf(providerStatus) === 'processing'
        ? { kind: 'in_progress', providerStatus }
        : { kind: 'operator' };
    }
    default:
      return { kind: 'provider', decision: providerDecision };
  }
}

/**
 * Milliseconds since the provider call started, in real time (the call's deadline and the
 * provider's not-found grace are about a network call, which a sandbox clock advance does not
 * end); a call never started is as old as can be.
 */
export function callAgeMs(startedAt: Date | string | null, realNow: Date): number {
  return startedAt === null ? Number.MAX_SAFE_INTEGER : realNow.getTime() - new Date(startedAt).getTime();
}

/** Whether the order's provider call may still be running: no answer recorded yet, and its deadline not passed. */
export function callInFlight(order: { upstreamOutcome: string; callAgeMs: number }, callTimeoutMs: number): boolean {
  return order.upstreamOutcome === 'pending' && order.callAgeMs < callTimeoutMs;
}

/** Delay before the next re-query of an open order: base·2^(checks-1), capped; base 0 means at once. */
export function recheckDelayMs(checks: number, baseMs: number, maxMs: number): number {
  if (baseMs <= 0) return 0;
  const exponent = Math.min(Math.max(0, checks - 1), 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}
