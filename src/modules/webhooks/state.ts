import type { DeliveryStatus, EndpointStatus } from './tables.js';
import { retryDelayAfter } from './schedule.js';
import { isEventType } from '../../events/index.js';

/**
 * The delivery state machine (pure).
 *
 *   pending ──attempt──▶ sent                       (2xx within the timeout; final)
 *   pending|failed ──attempt──▶ failed              (other answer, network error, address refused; schedule not spent)
 *   pending|failed ──attempt──▶ dead                (schedule spent, or 410 Gone)
 *   pending|failed ──job──▶ dead                    (endpoint disabled or deleted: no request)
 *   dead|failed ──redeliver──▶ pending              (new round, new generation)
 *   no_subscriber ──redeliver──▶ pending            (bound to the endpoints that match now)
 *   sent|pending ──redeliver──▶ refused (state_invalid)
 */

export interface DeliveryState {
  status: string;
  generation: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
}

export type ClaimDecision =
  /** Nothing to do: the record is gone, final, or a redelivery replaced this job's generation. */
  | { kind: 'stale' }
  /** Not yet: the attempt is not due, or another attempt holds the record. */
  | { kind: 'wait'; ms: number }
  /** The endpoint is disabled or deleted: the record goes `dead` without a request. */
  | { kind: 'endpoint_unavailable'; reason: string }
  | { kind: 'attempt' };

/**
 * Whether an attempt of `jobGeneration` may take the record now: the rule the claim statement
 * applies to every record it reads (queries/claims.ts, in SQL: pending or failed, due on the merchant's
 * clock, no live lease; a disabled or deleted endpoint's record goes dead). Kept as the rule's
 * executable statement (test/webhook-schedule.test.ts). `now` is the merchant's time
 * (next_attempt_at is on its clock); `realNow` is real time, which the attempt lease is on.
 */
export function decideClaim(
  d: DeliveryState | undefined,
  endpointStatus: EndpointStatus | undefined,
  jobGeneration: number,
  now: Date,
  realNow: Date = now,
): ClaimDecision {
  if (!d) return { kind: 'stale' };
  if (d.generation !== jobGeneration) return { kind: 'stale' };
  if (d.status !== 'pending' && d.status !== 'failed') return { kind: 'stale' };
  if (d.lease_until && d.lease_until.getTime() > realNow.getTime())
    return { kind: 'wait', ms: d.lease_until.getTime() - realNow.getTime() + 10 };
  if (endpointStatus !== 'enabled')
    return { kind: 'endpoint_unavailable', reason: `endpoint ${endpointStatus ?? 'missing'}` };
  if (d.next_attempt_at && d.next_attempt_at.getTime() > now.getTime())
    return { kind: 'wait', ms: d.next_attempt_at.getTime() - now.getTime() };
  return { kind: 'attempt' };
}

export type AttemptResult =
  | { kind: 'response'; httpStatus: number }
  /** Connection refused, reset, TLS failure, timeout: no status. */
  | { kind: 'network'; error: string }
  /** The address check at delivery time refused the target: no request was sent. */
  | { kind: 'refused'; reason: string };

export interface AttemptOutcome {
  status: Extract<DeliveryStatus, 'sent' | 'failed' | 'dead'>;
  attemptOutcome: 'sent' | 'failed' | 'refused';
  /** Milliseconds until the next attempt when `failed`. */
  retryInMs?: number;
  lastHttpStatus: number;
  error: string;
  /** 410 Gone: the receiver says the endpoint no longer exists. */
  endpointGone: boolean;
}

export function isSuccessStatus(httpStatus: number): boolean {
  return httpStatus >= 200 && httpStatus < 300;
}

/**
 * The record after the `roundAttempt`-th attempt of its round. `previousHttpStatus` is kept when
 * the attempt got no answer (last_http_status stays the last status actually received).
 */
export function decideOutcome(
  result: AttemptResult,
  roundAttempt: number,
  schedule: readonly number[],
  previousHttpStatus: number,
): AttemptOutcome {
  if (result.kind === 'response' && isSuccessStatus(result.httpStatus)) {
    return {
      status: 'sent',
      attemptOutcome: 'sent',
      lastHttpStatus: result.httpStatus,
      error: '',
      endpointGone: false,
    };
  }
  const lastHttpStatus = result.kind === 'response' ? result.httpStatus : previousHttpStatus;
  const attemptOutcome = result.kind === 'refused' ? 'refused' : 'failed';
  const error =
    result.kind === 'response'
      ? `HTTP ${result.httpStatus}`
      : result.kind === 'network'
        ? result.error
        : `address refused: ${result.reason}`;
  if (result.kind === 'response' && result.httpStatus === 410) {
    return { status: 'dead', attemptOutcome, lastHttpStatus, error, endpointGone: true };
  }
  const delay = retryDelayAfter(roundAttempt, schedule);
  if (delay === undefined) return { status: 'dead', attemptOutcome, lastHttpStatus, error, endpointGone: false };
  return { status: 'failed', attemptOutcome, retryInMs: delay, lastHttpStatus, error, endpointGone: false };
}

/** True once every attempt to an endpoint has failed for `windowMs` (it started failing at `failingSince`). */
export function failingTooLong(failingSince: Date | null, now: Date, windowMs: number): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= windowMs;
}

export type RedeliverAction = 'requeue' | 'bind' | 'refuse';

/** `dead`/`failed` are queued again, `no_subscriber` is bound to today's endpoints; anything else (unknown included) is
 * refused. */
export function redeliverAction(status: string): RedeliverAction {
  if (status === 'dead' || status === 'failed') return 'requeue';
  if (status === 'no_subscriber') return 'bind';
  return 'refuse';
}

/** Whether an endpoint subscribed to `eventTypes` wants events of `type`. */
export function subscribes(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.includes('*') || eventTypes.includes(type);
}

export const eventTypePattern = /^[a-z_]+(\.[a-z_]+)+$/;

/**
 * Normalises a subscription list: `*` alone (it may appear anywhere), or the distinct types in
 * order. Refused: an entry not of the pattern (`invalid_event_type`), or well formed but not in the
 * event catalogue (`unknown_event_type`: a typo such as `card.topup.credit` would match nothing).
 * `entry` names the first offending one.
 */
export function normaliseEventTypes(
  input: readonly string[],
): { ok: true; types: string[] } | { ok: false; reason: string; entry?: string } {
  if (input.length === 0) return { ok: false, reason: 'empty' };
  if (input.includes('*')) return { ok: true, types: ['*'] };
  const bad = input.find((t) => t.length > 100 || !eventTypePattern.test(t));
  if (bad !== undefined) return { ok: false, reason: 'invalid_event_type', entry: bad };
  const unknown = input.find((t) => !isEventType(t));
  if (unknown !== undefined) return { ok: false, reason: 'unknown_event_type', entry: unknown };
  return { ok: true, types: [...new Set(input)] };
}

export interface FanOutEvent {
  id: string;
  merchant_id: string;
  environment: string;
  type: string;
  /** The merchant's time of the event: the endpoints are judged as they were then. */
  created_at: Date;
}

/** An endpoint as it is now (deleted ones too when they changed after an event of the batch). */
export interface FanOutEndpoint {
  id: string;
  merchant_id: string;
  environment: string;
  status: string;
  event_types: string[];
  /** Its changes after the batch's oldest event, in the order they were made. */
  changes?: readonly EndpointChange[];
}

/** A change of an endpoint's subscription, with the state before it (`prev_status` null: it did not exist). */
export interface EndpointChange {
  valid_from: Date;
  prev_status: string | null;
  prev_event_types: string[] | null;
}

export interface PlannedDelivery {
  eventId: string;
  eventType: string;
  merchantId: string;
  environment: string;
  /** null: nobody subscribes; the record is `no_subscriber`. */
  endpointId: string | null;
}

/**
 * An endpoint's status and subscription at `at`: the state before its earliest change after
 * `at`, or its state now when it has none (undefined: it did not exist yet).
 */
function endpointAt(
  endpoint: FanOutEndpoint,
  at: Date,
): { status: string; event_types: readonly string[] } | undefined {
  const later = endpoint.changes?.find((c) => c.valid_from.getTime() > at.getTime());
  if (!later) return { status: endpoint.status, event_types: endpoint.event_types };
  if (later.prev_status === null) return undefined;
  return { status: later.prev_status, event_types: later.prev_event_types ?? [] };
}

/**
 * One record per endpoint of the event's merchant and environment that was enabled and subscribed
 * to its type at the event's time (the reference: "no matching endpoint at event time"), in the
 * endpoints' order, or one `no_subscriber` record.
 */
export function planFanOut(events: readonly FanOutEvent[], endpoints: readonly FanOutEndpoint[]): PlannedDelivery[] {
  const byOwner = new Map<string, FanOutEndpoint[]>();
  for (const e of endpoints) {
    const k = `${e.merchant_id}|${e.environment}`;
    byOwner.set(k, [...(byOwner.get(k) ?? []), e]);
  }
  const plan: PlannedDelivery[] = [];
  for (const ev of events) {
    const matching = (byOwner.get(`${ev.merchant_id}|${ev.environment}`) ?? []).filter((e) => {
      const then = endpointAt(e, ev.created_at);
      return then?.status === 'enabled' && subscribes(then.event_types, ev.type);
    });
    const base = { eventId: ev.id, eventType: ev.type, merchantId: ev.merchant_id, environment: ev.environment };
    if (matching.length === 0) plan.push({ ...base, endpointId: null });
    for (const e of matching) plan.push({ ...base, endpointId: e.id });
  }
  return plan;
}
