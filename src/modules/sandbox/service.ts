import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { deleteSandboxApiLogs, deleteSandboxDeliveries, tableExists } from './queries.js';
import { clearBehaviors, setBehavior } from '../../upstreams/queries/behaviors.js';
import {
  injectedBehaviors,
  injectionTtlSeconds,
  isInjectedBehavior,
  isUpstreamName,
  upstreamNames,
} from '../../upstreams/port.js';

/** POST /v1/sandbox/upstream-behavior: upstream case-insensitive, behaviour exact; `success` clears. */
export async function presetBehavior(
  trx: Transaction<Database>,
  merchantId: string,
  input: { upstream: string; behavior: string },
) {
  const upstream = input.upstream.trim().toLowerCase();
  if (!isUpstreamName(upstream))
    throw new ApiError('invalid_request', `upstream must be one of ${upstreamNames.join(', ')}.`);
  const behavior = input.behavior;
  if (!isInjectedBehavior(behavior))
    throw new ApiError('invalid_request', `behavior must be one of ${injectedBehaviors.join(', ')}.`);
  await setBehavior(trx, merchantId, upstream, behavior);
  return { ok: true as const, upstream, behavior, expires_in: injectionTtlSeconds };
}

export const resetNote =
  'Webhook delivery records, API call logs and injected upstream behaviours of this sandbox merchant were ' +
  'cleared. Ledger entries, orders and members are kept, so balances do not reset.';

/** POST /v1/sandbox/reset: this merchant's sandbox logs and presets only; never money, orders or members. */
export async function resetSandbox(trx: Transaction<Database>, merchantId: string) {
  let deliveries = 0;
  if (await tableExists(trx, 'webhook_deliveries')) {
    deliveries = await deleteSandboxDeliveries(trx, merchantId);
  }
  const logs = await deleteSandboxApiLogs(trx, merchantId);
  await clearBehaviors(trx, merchantId);
  return {
    ok: true as const,
    cleared: { merchant_webhook_deliveries: deliveries, merchant_api_logs: logs },
    note: resetNote,
  };
}

/** The sandbox clock, for the other areas that drive it (the merchant console's sandbox tools). */
export { advanceClock, advanceSecondsMax, readClock } from './clock.js';
