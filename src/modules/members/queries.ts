import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A member by either of its ids: the service's `mem_<uuid>` or the merchant's external id. */
export async function resolveMember(db: Db, merchantId: string, environment: Environment, idOrExternal: string) {
  const rows = await db
    .selectFrom('members')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment)
    .where((eb) => eb.or([eb('id', '=', idOrExternal), eb('external_member_id', '=', idOrExternal)]))
    .execute();
  return rows.find((r) => r.id === idOrExternal) ?? rows[0];
}
