import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The sandbox clock's rows (clock.ts) and a sandbox reset's deletes (service.ts). */

/** The row an advance locks; made in the advance's first transaction (under the key's claim). */
export async function ensureClockRow(db: Kysely<Database>, merchantId: string): Promise<void> {
  await sql`INSERT INTO sandbox_clocks (merchant_id) VALUES (${merchantId})
    ON CONFLICT (merchant_id) DO NOTHING`.execute(db);
}

/**
 * A held lease: its expiry as the database wrote it (text, to the microsecond), which is also
 * what proves the lease is still this call's. Renewing and releasing touch the row only while it
 * holds that value: an advance that outlived its lease (another process then took the clock)
 * never extends nor frees the other's lease, so a third advance cannot start beside it.
 */
export interface Lease {
  merchantId: string;
  until: string;
}

/** Takes the merchant's advance lease for `leaseMs` if no live one is held. */
export async function takeLease(db: Kysely<Database>, merchantId: string, leaseMs: number): Promise<Lease | undefined> {
  const { rows } = await sql<{ until: string }>`
    UPDATE sandbox_clocks SET advance_lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE merchant_id = ${merchantId} AND (advance_lease_until IS NULL OR advance_lease_until < now())
    RETURNING advance_lease_until::text AS until
  `.execute(db);
  return rows[0] ? { merchantId, until: rows[0].until } : undefined;
}

/** Extends the lease while it is still this call's; false once another advance holds the clock. */
export async function renewLease(db: Kysely<Database>, lease: Lease, leaseMs: number): Promise<boolean> {
  const { rows } = await sql<{ until: string }>`
    UPDATE sandbox_clocks SET advance_lease_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE merchant_id = ${lease.merchantId} AND advance_lease_until = ${lease.until}::timestamptz
    RETURNING advance_lease_until::text AS until
  `.execute(db);
  if (!rows[0]) return false;
  lease.until = rows[0].until;
  return true;
}

export async function releaseLease(db: Kysely<Database>, lease: Lease): Promise<void> {
  await sql`UPDATE sandbox_clocks SET advance_lease_until = NULL WHERE merchant_id = ${lease.merchantId} AND
    advance_lease_until = ${lease.until}::timestamptz`.execute(db);
}

/** Whether a table exists (webhook_deliveries belongs to another migration). */
export async function tableExists(trx: Transaction<Database>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name =
      ${name}) AS found`.execute(trx);
  return rows[0]?.found === true;
}

/** Deletes the merchant's sandbox delivery records; answers how many. */
export async function deleteSandboxDeliveries(trx: Transaction<Database>, merchantId: string): Promise<number> {
  const res =
    await sql`DELETE FROM webhook_deliveries WHERE merchant_id = ${merchantId} AND environment = 'sandbox'`.execute(
      trx,
    );
  return Number(res.numAffectedRows ?? 0n);
}

/** Deletes the merchant's sandbox API call logs; answers how many. */
export async function deleteSandboxApiLogs(trx: Transaction<Database>, merchantId: string): Promise<number> {
  const logs = await trx
    .deleteFrom('api_call_logs')
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', 'sandbox')
    .executeTakeFirst();
  return Number(logs.numDeletedRows);
}
