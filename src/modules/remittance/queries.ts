/** Remittance's SQL for shared payees and members' links (orders: order-queries.ts; corridors: corridors.ts). */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { PayeeEntityRow, PayeeRow, RemitPayeeEntitiesTable } from './tables.js';

export type Db = Kysely<Database> | Transaction<Database>;

export interface MemberCaller {
  merchantId: string;
  environment: Environment;
  memberId: string;
}

/**
 * The shared payee of a fingerprint, created if absent. Race-safe: of concurrent creators one
 * inserts (`created: true`); the others wait for its commit, insert nothing and read its row.
 */
export async function entityFor(trx: Transaction<Database>, values: Insertable<RemitPayeeEntitiesTable>): Promise<{ entity: PayeeEntityRow; created: boolean }> {
  const inserted = await trx
    .insertInto('remit_payee_entities')
    .values(values)
    .onConflict((oc) => oc.columns(['environment', 'fingerprint']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { entity: inserted, created: true };
  const entity = await trx
    .selectFrom('remit_payee_entities')
    .selectAll()
    .where('environment', '=', values.environment)
    .where('fingerprint', '=', values.fingerprint)
    .executeTakeFirstOrThrow();
  return { entity, created: false };
}

/** Parses `pye_<number>` or `<number>`; anything else names no payee. */
export function payeeSeqOf(id: string): bigint | undefined {
  const m = /^(?:pye_)?([1-9][0-9]{0,18})$/.exec(id);
  if (!m) return undefined;
  const n = BigInt(m[1]!);
  return n <= 2n ** 63n - 1n ? n : undefined;
}

export const payeeIdOf = (seq: bigint | string) => `pye_${seq}`;

/** The member's active link by id (unlinked, another member's or absent: undefined). */
export async function findActivePayee(db: Db, caller: MemberCaller, id: string): Promise<PayeeRow | undefined> {
  const seq = payeeSeqOf(id);
  if (seq === undefined) return undefined;
  return db
    .selectFrom('remit_payees')
    .selectAll()
    .where('seq', '=', seq)
    .where('member_id', '=', caller.memberId)
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

/** The member's link by id in any status (DELETE answers a repeat from it). */
export async function findOwnPayee(db: Db, caller: MemberCaller, id: string): Promise<PayeeRow | undefined> {
  const seq = payeeSeqOf(id);
  if (seq === undefined) return undefined;
  return db
    .selectFrom('remit_payees')
    .selectAll()
    .where('seq', '=', seq)
    .where('member_id', '=', caller.memberId)
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment)
    .executeTakeFirst();
}

export async function entityById(db: Db, id: string): Promise<PayeeEntityRow> {
  return db.selectFrom('remit_payee_entities').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The member's active links, for the grouped keyset walk (favourites first, then newest). */
export function activePayeesQuery(db: Db, caller: MemberCaller) {
  return db
    .selectFrom('remit_payees')
    .selectAll()
    .where('member_id', '=', caller.memberId)
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment)
    .where('status', '=', 'active');
}

/** Shared payees by id (a page's worth). */
export async function entitiesByIds(db: Db, ids: string[]): Promise<Map<string, PayeeEntityRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('remit_payee_entities').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r]));
}
