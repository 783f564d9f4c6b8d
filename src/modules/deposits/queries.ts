import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { DepositsTable } from './tables.js';

/** Reads and writes of the deposits table. */

type Db = Kysely<Database> | Transaction<Database>;
type Row = Selectable<DepositsTable>;

export interface Caller {
  merchantId: string;
  environment: Environment;
  /** Set when acting on behalf of a member: only that member's deposits are visible. */
  memberId?: string;
}

/** The new row, or undefined when the merchant already reported this tx_hash for this asset. */
export async function insertDeposit(trx: Transaction<Database>, values: Insertable<DepositsTable>): Promise<Row | undefined> {
  return trx
    .insertInto('deposits')
    .values(values)
    .onConflict((oc) => oc.columns(['merchant_id', 'environment', 'asset', 'tx_hash']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** One of the merchant's deposits in the caller's environment (on behalf of a member: only its own). */
export async function findDeposit(db: Db, caller: Caller, id: string): Promise<Row | undefined> {
  let q = db
    .selectFrom('deposits')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (caller.memberId) q = q.where('member_id', '=', caller.memberId);
  return q.executeTakeFirst();
}

export interface DepositPage {
  limit: number;
  after: bigint | undefined;
  memberId?: string;
  asset?: string;
  createdGte?: string;
  createdLt?: string;
}

/** One page newest first (keyset on `seq`), one row more than `limit`; the filters narrow the walk. */
export async function depositPage(db: Db, caller: Caller, page: DepositPage): Promise<Row[]> {
  let q = db
    .selectFrom('deposits')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (page.memberId !== undefined) q = q.where('member_id', '=', page.memberId);
  if (page.asset !== undefined) q = q.where('asset', '=', page.asset);
  if (page.createdGte !== undefined) q = q.where('created_at', '>=', new Date(page.createdGte));
  if (page.createdLt !== undefined) q = q.where('created_at', '<', new Date(page.createdLt));
  if (page.after !== undefined) q = q.where('seq', '<', page.after.toString() as unknown as bigint);
  return q.orderBy('seq', 'desc').limit(page.limit + 1).execute();
}
