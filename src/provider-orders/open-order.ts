import type { Clock } from '../platform/clock.js';
import { callAgeMs, callInFlight } from './lifecycle.js';

/** What a check of an open order reads of the service: real time and the provider call's deadline. */
interface CallCheckContext {
  clock: Pick<Clock, 'real'>;
  config: { upstreamCallTimeoutMs: number };
}

/**
 * What the lifecycle's rules read of an open order: its status, the provider's answer so far and
 * its call's age in real time (a network call, which a sandbox clock advance does not end).
 * `callStartedAt` is the area's own column for when the call started.
 */
export const openOrderFacts = <S extends string, O extends string>(
  ctx: Pick<CallCheckContext, 'clock'>,
  order: { status: S; upstream_outcome: O },
  callStartedAt: Date | string | null,
) => ({
  status: order.status,
  upstreamOutcome: order.upstream_outcome,
  callAgeMs: callAgeMs(callStartedAt, ctx.clock.real()),
});

/** Whether the open order's provider call may still be running (no answer yet, its deadline not passed). */
export const orderCallInFlight = (
  ctx: CallCheckContext,
  order: { status: string; upstream_outcome: string },
  callStartedAt: Date | string | null,
): boolean => callInFlight(openOrderFacts(ctx, order, callStartedAt), ctx.config.upstreamCallTimeoutMs);
