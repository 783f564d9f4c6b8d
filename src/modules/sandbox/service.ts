import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../../platform/errors.js';
import { clearBehaviors, setBehavior } from '../../upstreams/behaviors.js';
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

/** Whether a table exists (webhook_deliveries belongs to another migration). */
async function tableExists(trx: Transaction<Database>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name =
      ${name}) AS found`.execute(trx);
  return rows[0]?.found === true;
}

export const resetNote =
  'Webhook delivery records, API call logs and injected upstream behaviours of this sandbox merchant were ' +
  'cleared. Ledger entries, orders and members are kept, so balances do not reset.';

/** POST /v1/sandbox/reset: this merchant's sandbox logs and presets only; never money, orders or members. */
export async function resetSandbox(trx: Transaction<Database>, merchantId: string) {
  let deliveries = 0;
  if (await tableExists(trx, 'webhook_deliveries')) {
    const res =
      await sql`DELETE FROM webhook_deliveries WHERE merchant_id = ${merchantId} AND environment = 'sandbox'`.execute(
        trx,
      );
    deliveries = Number(res.numAffectedRows ?? 0n);
  }
  const logs = await trx
    .deleteFrom('api_call_logs')
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', 'sandbox')
    .executeTakeFirst();
  await clearBehaviors(trx, merchantId);
  return {
    ok: true as const,
    cleared: { merchant_webhook_deliveries: deliveries, merchant_api_logs: Number(logs.numDeletedRows) },
    note: resetNote,
  };
}

/** The sandbox clock, for the other areas that drive it (the merchant console's sandbox tools). */
export { advanceClock, advanceSecondsMax, readClock } from './clock.js';
