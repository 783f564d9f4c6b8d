import type { Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { scopeNowSql } from '../../platform/queries/clock.js';

/** Reads and writes of the merchant's deposit addresses (service.ts). */

/** Stores an issued address; a repeat of its id writes nothing. */
export async function insertAddress(
  trx: Transaction<Database>,
  merchantId: string,
  environment: 'sandbox' | 'production',
  a: { id: string; asset: string; network: string; address: string },
): Promise<void> {
  await trx
    .insertInto('deposit_addresses')
    // created_at on the merchant's clock (a sandbox merchant's own time), not the column's default (the database's real
    // time).
    .values({
      id: a.id,
      merchant_id: merchantId,
      environment,
      asset: a.asset,
      network: a.network,
      address: a.address,
      created_at: scopeNowSql(merchantId, environment) as unknown as Date,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function addressById(db: Db, id: string) {
  return db.selectFrom('deposit_addresses').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The merchant's addresses, of one asset and network when given, as a query the keyset pagination pages through. */
export function addressesQuery(
  db: Db,
  merchantId: string,
  environment: 'sandbox' | 'production',
  asset: string | undefined,
  network: string | undefined,
) {
  let q = db.selectFrom('deposit_addresses').selectAll().where(inScope({ merchantId, environment }));
  if (asset) q = q.where('asset', '=', asset);
  if (network) q = q.where('network', '=', network);
  return q;
}
