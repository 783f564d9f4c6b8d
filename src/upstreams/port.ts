import type { Environment } from '../db/schema.js';

/**
 * What every upstream adapter shares: the names, the call context, and the outcomes of a
 * money-moving call and of a status query. Adapters map their provider's wire answers onto these;
 * the service decides what to do with them (docs/upstreams.md).
 */

export const upstreamNames = ['remittance', 'card', 'qrpay', 'chain'] as const;
export type UpstreamName = (typeof upstreamNames)[number];

export function isUpstreamName(value: string): value is UpstreamName {
  return (upstreamNames as readonly string[]).includes(value);
}

/** Who a call is made for: injected sandbox behaviours are looked up by it. */
export interface CallContext {
  merchantId: string;
  environment: Environment;
}

/** The states of a provider order that we understand. Anything else is outside our enumeration. */
export const providerStatuses = ['processing', 'succeeded', 'failed', 'refunded'] as const;
export type ProviderStatus = (typeof providerStatuses)[number];

/** The simulator's answer for a state outside our enumeration (behaviour `unknown_status`). */
export const SANDBOX_UNKNOWN_STATUS = 'SANDBOX_UNKNOWN_STATUS';

/** A provider's raw status as one of ours, or undefined when it is outside our enumeration. */
export function providerStatusOf(raw: string): ProviderStatus | undefined {
  return (providerStatuses as readonly string[]).includes(raw) ? (raw as ProviderStatus) : undefined;
}

/** What every money-moving request to a provider carries: our request id (its idempotency key) and the money. */
export interface MoneyRequest {
  requestId: string;
  currency: string;
  amountMinor: bigint;
}

/**
 * No answer to go by, the outcome unknown: `timeout` (no bytes came back) or `unknown` (5xx or a
 * fault of the provider's idempotency layer). Every outcome of a provider call may be one of these.
 */
export type NoAnswer = { kind: 'timeout' } | { kind: 'unknown'; reason: string };

/**
 * Outcome of a money-moving call.
 * - `accepted`: the provider took it; `status` is its raw state (usually `processing`; a
 *   synchronous provider may answer `succeeded`; it may also be outside our enumeration).
 * - `rejected`: an explicit refusal; nothing will happen.
 * - `timeout`: no bytes came back: the outcome is unknown.
 * - `unknown`: 5xx or a fault of the provider's idempotency layer: the outcome is unknown.
 */
export type CallOutcome<D = Record<string, never>> =
  | { kind: 'accepted'; providerOrderId: string; status: string; detail: D }
  | { kind: 'rejected'; reason: string }
  | NoAnswer;

/** Outcome of a status query (read-only). `found.status` is raw: check it with `providerStatusOf`. */
export type StatusOutcome =
  { kind: 'found'; providerOrderId: string; status: string } | { kind: 'not_found' } | NoAnswer;

/** Behaviours a sandbox merchant can preset for one upstream's money-moving step. */
export const injectedBehaviors = ['success', 'reject', 'timeout', 'unknown', 'unknown_status'] as const;
export type InjectedBehavior = (typeof injectedBehaviors)[number];

export function isInjectedBehavior(value: string): value is InjectedBehavior {
  return (injectedBehaviors as readonly string[]).includes(value);
}

/** The reference's constant: an injection reverts to `success` after this many seconds. */
export const injectionTtlSeconds = 3600;
