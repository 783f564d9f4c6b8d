import { sql } from 'kysely';
import type { Db } from '../../db/schema.js';
import { scopeNowSql } from '../../platform/queries/clock.js';
import { injectionTtlSeconds, type CallContext, type InjectedBehavior, type UpstreamName } from '../port.js';

/**
 * Sandbox behaviour injection: a merchant presets how one upstream's money-moving step answers,
 * for itself only, for `injectionTtlSeconds` of its own clock (advancing the sandbox clock past
 * the expiry ends the preset). Production never reads a preset.
 */

/** A sandbox merchant's time on the database's side (real time plus its clock's offset). */
const merchantNow = (merchantId: string) => scopeNowSql(merchantId, 'sandbox');

/** The behaviour in force for this caller and upstream: `success` unless a live preset exists. */
export async function activeBehavior(db: Db, call: CallContext, upstream: UpstreamName): Promise<InjectedBehavior> {
  if (call.environment !== 'sandbox') return 'success';
  const row = await db
    .selectFrom('upstream_behaviors')
    .select('behavior')
    .where('merchant_id', '=', call.merchantId)
    .where('environment', '=', 'sandbox')
    .where('upstream', '=', upstream)
    .where('expires_at', '>', merchantNow(call.merchantId))
    .executeTakeFirst();
  return row?.behavior ?? 'success';
}

/** Sets (or, for `success`, clears) a sandbox merchant's preset; it expires after the TTL. */
export async function setBehavior(
  db: Db,
  merchantId: string,
  upstream: UpstreamName,
  behavior: InjectedBehavior,
): Promise<void> {
  if (behavior === 'success') {
    await clearBehaviors(db, merchantId, upstream);
    return;
  }
  const values = {
    merchant_id: merchantId,
    environment: 'sandbox' as const,
    upstream,
    behavior,
    expires_at:
      sql<Date>`${merchantNow(merchantId)} + make_interval(secs => ${injectionTtlSeconds})` as unknown as Date,
    created_at: merchantNow(merchantId) as unknown as Date,
  };
  await db
    .insertInto('upstream_behaviors')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'environment', 'upstream']).doUpdateSet({
        behavior,
        expires_at: values.expires_at,
        created_at: values.created_at,
      }),
    )
    .execute();
}

/** Removes a sandbox merchant's presets (one upstream, or all four); answers how many went. */
export async function clearBehaviors(db: Db, merchantId: string, upstream?: UpstreamName): Promise<number> {
  let q = db
    .deleteFrom('upstream_behaviors')
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', 'sandbox');
  if (upstream) q = q.where('upstream', '=', upstream);
  const result = await q.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes presets past their expiry on their merchant's clock (they are already ignored); housekeeping. */
export async function purgeExpiredBehaviors(db: Db): Promise<void> {
  await db
    .deleteFrom('upstream_behaviors')
    .where(
      'expires_at',
      '<=',
      scopeNowSql(sql.ref('upstream_behaviors.merchant_id'), sql.ref('upstream_behaviors.environment')),
    )
    .execute();
}
