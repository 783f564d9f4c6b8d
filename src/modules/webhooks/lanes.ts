import { connectionsPerEndpointMax } from './http-post.js';

/**
 * Attempts in flight per endpoint in this process: at most `connectionsPerEndpointMax` (the size
 * of the endpoint's keep-alive pool, so no request waits for a connection), so that one slow
 * receiver holds at most that many of the process's attempts and never the others'. A claim asks
 * for no more of an endpoint's records than it has free lanes, and takes them before any other
 * claim of the process is computed (`claiming`), so two claims never overshoot the bound.
 *
 * Per process rather than per service, like the connection pools: endpoint ids are unique.
 */

const inFlight = new Map<string, number>();
let releaseWaiters: Array<() => void> = [];
let claimChain: Promise<unknown> = Promise.resolve();

export interface LaneLimits {
  /** Endpoints with every lane taken: none of their records may be claimed. */
  full: string[];
  /** Endpoints with some lanes taken: at most this many more of theirs. */
  partial: Map<string, number>;
  /** Lanes of an endpoint with none taken. */
  perEndpointMax: number;
}

export function laneLimits(): LaneLimits {
  const full: string[] = [];
  const partial = new Map<string, number>();
  for (const [endpointId, n] of inFlight) {
    if (n >= connectionsPerEndpointMax) full.push(endpointId);
    else partial.set(endpointId, connectionsPerEndpointMax - n);
  }
  return { full, partial, perEndpointMax: connectionsPerEndpointMax };
}

/**
 * Runs one claim at a time in this process: `claim` computes its limits from `laneLimits()` and
 * answers the endpoint of each record it took, whose lanes are taken before the next claim starts.
 */
export function claiming<T extends { endpoint_id: string }>(claim: (limits: LaneLimits) => Promise<T[]>): Promise<T[]> {
  const run = claimChain.then(async () => {
    const taken = await claim(laneLimits());
    for (const t of taken) inFlight.set(t.endpoint_id, (inFlight.get(t.endpoint_id) ?? 0) + 1);
    return taken;
  });
  claimChain = run.catch(() => undefined);
  return run;
}

/** Gives back the lane of one attempt (its request ended). */
export function releaseLane(endpointId: string): void {
  const left = (inFlight.get(endpointId) ?? 1) - 1;
  if (left <= 0) inFlight.delete(endpointId);
  else inFlight.set(endpointId, left);
  const waiters = releaseWaiters;
  releaseWaiters = [];
  for (const w of waiters) w();
}

/** Resolves at the next release of any lane, or after `timeoutMs`. */
export function laneReleased(timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    releaseWaiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Attempts in flight to one endpoint in this process (tests, the operator view). */
export function lanesInUse(endpointId: string): number {
  return inFlight.get(endpointId) ?? 0;
}
