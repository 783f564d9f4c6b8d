/** Sandbox tools: the clock, upstream presets, reset (404 `not_found` on a production host). */
import type { SandboxClock, SandboxReset, UpstreamBehaviorPreset } from '../types.js';
import { key, type ResourceHost, type WriteOptions } from './shared.js';

export interface SandboxResource {
  /** GET /v1/sandbox/clock: this merchant's sandbox time (`now`, ISO 8601). */
  clock(): Promise<SandboxClock>;
  /**
   * POST /v1/sandbox/clock/advance (idempotent): moves the clock forward by `seconds` (an integer
   * from 1 to 31,536,000) and answers once every timed process due on the way (expiries, webhook
   * retries, ...) has run. Replaces sleeping in a merchant's tests.
   */
  advanceClock(seconds: number, opts?: WriteOptions): Promise<SandboxClock>;
  /** POST /v1/sandbox/upstream-behavior (idempotent): presets one upstream's answer for an hour of the sandbox clock.
   * */
  presetUpstreamBehavior(
    body: { upstream: string; behavior: string },
    opts?: WriteOptions,
  ): Promise<UpstreamBehaviorPreset>;
  /** POST /v1/sandbox/reset (idempotent): clears this merchant's sandbox logs and presets (never money). */
  reset(opts?: WriteOptions): Promise<SandboxReset>;
}

export function createSandboxResource(host: ResourceHost): SandboxResource {
  return {
    clock: () => host.request<SandboxClock>({ method: 'GET', path: '/v1/sandbox/clock' }),
    advanceClock: (seconds, opts) =>
      host.request<SandboxClock>({
        method: 'POST',
        path: '/v1/sandbox/clock/advance',
        body: { seconds },
        idempotencyKey: key(opts),
      }),
    presetUpstreamBehavior: (body, opts) =>
      host.request<UpstreamBehaviorPreset>({
        method: 'POST',
        path: '/v1/sandbox/upstream-behavior',
        body,
        idempotencyKey: key(opts),
      }),
    reset: (opts) =>
      host.request<SandboxReset>({ method: 'POST', path: '/v1/sandbox/reset', idempotencyKey: key(opts) }),
  };
}
