import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import type { DepositsTable } from './tables.js';
import { keysetPage, type ListEnvelope, type PageParams } from '../../platform/pagination.js';
import { scopeNowSql } from '../../platform/clock.js';

/** Reads and writes of the deposits table. */

type Db = Kysely<Database> | Transaction<Database>;
type Row = Selectable<DepositsTable>;

export interface Caller {
  merchantId: string;
  environment: Environment;
  /** Set when acting on behalf of a member: only that member's deposits are visible. */
  memberId?: string;
}

/** The new row, or undefined when the merchant already reported this tx_hash for this asset. Created at the merchant's time. */
export async function insertDeposit(trx: Transaction<Database>, values: Insertable<DepositsTable>): Promise<Row | undefined> {
  return trx
    .insertInto('deposits')
    .values({ created_at: scopeNowSql(values.merchant_id, values.environment) as unknown as Date, ...values })
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

export interface DepositFilter {
  memberId?: string;
  asset?: string;
  createdGte?: string;
  createdLt?: string;
}

/** One page newest first (the one keyset walk); the filters narrow it. */
export async function depositPage(db: Db, caller: Caller, filter: DepositFilter, page: PageParams): Promise<ListEnvelope<Row>> {
  let q = db
    .selectFrom('deposits')
    .selectAll()
    .where('merchant_id', '=', caller.merchantId)
    .where('environment', '=', caller.environment);
  if (filter.memberId !== undefined) q = q.where('member_id', '=', filter.memberId);
  if (filter.asset !== undefined) q = q.where('asset', '=', filter.asset);
  if (filter.createdGte !== undefined) q = q.where('created_at', '>=', new Date(filter.createdGte));
  if (filter.createdLt !== undefined) q = q.where('created_at', '<', new Date(filter.createdLt));
  return keysetPage(q, page);
}
