/** QR pay's SQL: the order reads and claims the services build on. */
import { sql, type Insertable, type Transaction } from 'kysely';
import { ownedBy } from '../../db/owned-by.js';
import type { Database, Db } from '../../db/schema.js';
import { withPrefix } from '../../platform/ids.js';
import { getAsset } from '../assets/index.js';
import type { DecodedQr } from './emvco.js';
import type { QrScheme } from './schemes.js';
import { openStatuses, type PublicStatus } from './state.js';
import type { QrOrderRow, QrPayOrdersTable, QrPayOrderStatus } from './tables.js';
import type { Caller } from '../../platform/caller.js';

export type { Db } from '../../db/schema.js';

/** The order made with an idempotency key inside its 24-hour window, if any. */
export async function findByKey(
  trx: Transaction<Database>,
  caller: Caller,
  key: string,
): Promise<QrOrderRow | undefined> {
  return (
    trx
      .selectFrom('qrpay_orders')
      .selectAll()
      .where('merchant_id', '=', caller.merchantId)
      .where('environment', '=', caller.environment)
      .where('idempotency_key', '=', key)
      // The idempotency window: after 24 hours of real time a key is new (extensions 8: the sandbox
      // clock does not move it). created_at is on the merchant's clock; the call started, in real
      // time, in the transaction that created the order.
      .where('call_started_at', '>', sql<Date>`now() - interval '24 hours'`)
      .orderBy('seq', 'desc')
      .executeTakeFirst()
  );
}

/** One order by id (`qrp_` optional); with a caller, only the caller's (a member's: its own). */
export async function findOrder(db: Db, id: string, caller?: Caller): Promise<QrOrderRow | undefined> {
  let q = db.selectFrom('qrpay_orders').selectAll().where('id', '=', withPrefix('qrp', id));
  if (caller) q = q.where(ownedBy(caller));
  return q.executeTakeFirst();
}

/** Whether the catalogue can pay the scheme: an enabled fiat asset of its currency, matching the QR. */
export async function payableAsset(db: Db, scheme: QrScheme, decoded: DecodedQr) {
  if (decoded.currency !== scheme.currency) return undefined;
  const asset = await getAsset(db, scheme.currency);
  return asset && asset.enabled && asset.type === 'fiat' ? asset : undefined;
}

const statusesOf = (s: PublicStatus): QrPayOrderStatus[] => (s === 'processing' ? ['processing', 'suspended'] : [s]);

/** The caller's orders (a member's: its own), optionally of one public status; for keysetPage. */
export function paymentsQuery(db: Db, caller: Caller, status?: PublicStatus) {
  let q = db.selectFrom('qrpay_orders').selectAll().where(ownedBy(caller));
  if (status) q = q.where('status', 'in', statusesOf(status));
  return q;
}

/** Open orders of every merchant (or one); for keysetPage. */
export function openOrdersQuery(db: Db, merchantId?: string) {
  let q = db.selectFrom('qrpay_orders').selectAll().where('status', 'in', openStatuses);
  if (merchantId) q = q.where('merchant_id', '=', merchantId);
  return q;
}

/**
 * When reconciliation takes over an order whose provider call has not answered: `seconds` after
 * now, on real time (the provider's own clock is real, whatever the sandbox clock says).
 */
export const reconcileAfter = (seconds: number): Date =>
  sql<Date>`now() + make_interval(secs =>
          ${seconds})` as unknown as Date;

export function insertOrder(trx: Transaction<Database>, values: Insertable<QrPayOrdersTable>): Promise<QrOrderRow> {
  return trx.insertInto('qrpay_orders').values(values).returningAll().executeTakeFirstOrThrow();
}
