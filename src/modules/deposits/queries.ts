import { sql, type Selectable, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { inScope, ownedBy } from '../../db/owned-by.js';
import type { DepositsTable } from './tables.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import type { Caller } from '../../platform/caller.js';

/** Reads and writes of the deposits table. */

type Row = Selectable<DepositsTable>;

/** A deposit of `insertDeposits`: the member as the request named it (either id). */
export interface NewDeposit {
  id: string;
  merchantId: string;
  environment: Environment;
  memberRef: string;
  asset: string;
  network: string | null;
  amount: string;
  txHash: string;
}

/** What `insertDeposits` made of one deposit: its row, or why there is none. */
export type InsertedDeposit =
  { row: Row; externalMemberId: string } | { refused: 'member_not_found' | 'duplicate_resource' };

/**
 * Many deposits, of any merchants, in one statement (group commit), through
 * `mwa_insert_deposits_across` (migration 051): each member resolved as `resolveMember` does (the internal id first,
 * then the
 * external id; it must be active), the rows inserted in the given order, a tx_hash already
 * reported (before, or earlier in the list) inserting nothing. One answer per deposit, in order;
 * a refused one wrote nothing.
 */
export async function insertDeposits(
  trx: Transaction<Database>,
  deposits: readonly NewDeposit[],
): Promise<InsertedDeposit[]> {
  if (deposits.length === 0) return [];
  const { rows } = await sql<Partial<Row> & { member_found: boolean; member_external_id: string | null }>`
    SELECT r.member_found, r.member_external_id, (r.deposit).*
    FROM mwa_insert_deposits_across(${deposits.map((d) => d.merchantId)}::text[],
      ${deposits.map((d) => d.environment)}::text[],
                             ${deposits.map((d) => d.id)}::text[], ${deposits.map((d) => d.memberRef)}::text[],
                               ${deposits.map((d) => d.asset)}::text[],
                             ${deposits.map((d) => d.network)}::text[], ${deposits.map((d) => d.amount)}::numeric[],
                               ${deposits.map((d) => d.txHash)}::text[]) r
    ORDER BY r.ord
  `.execute(trx);
  return rows.map((r) => {
    if (!r.member_found) return { refused: 'member_not_found' };
    if (r.id == null) return { refused: 'duplicate_resource' };
    const { member_found: _found, member_external_id, ...row } = r;
    return { row: row as Row, externalMemberId: member_external_id ?? '' };
  });
}

/** One of the merchant's deposits in the caller's environment (on behalf of a member: only its own). */
export async function findDeposit(db: Db, caller: Caller, id: string): Promise<Row | undefined> {
  return db.selectFrom('deposits').selectAll().where('id', '=', id).where(ownedBy(caller)).executeTakeFirst();
}

export interface DepositFilter {
  memberId?: string;
  asset?: string;
  createdGte?: string;
  createdLt?: string;
}

/** One page newest first (the one keyset walk); the filters narrow it. */
export async function depositPage(
  db: Db,
  caller: Caller,
  filter: DepositFilter,
  page: PageParams,
): Promise<ListEnvelope<Row>> {
  let q = db.selectFrom('deposits').selectAll().where(inScope(caller));
  if (filter.memberId !== undefined) q = q.where('member_id', '=', filter.memberId);
  if (filter.asset !== undefined) q = q.where('asset', '=', filter.asset);
  if (filter.createdGte !== undefined) q = q.where('created_at', '>=', new Date(filter.createdGte));
  if (filter.createdLt !== undefined) q = q.where('created_at', '<', new Date(filter.createdLt));
  return keysetPage(q, page);
}
