import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
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
    .onConflict((oc) => oc.columns(['merchant_id', 'environment', 'asset', 'tx_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** A deposit of `insertDeposits`: the member as the request named it (either id). */
export interface NewDeposit {
  id: string;
  memberRef: string;
  asset: string;
  network: string | null;
  amount: string;
  txHash: string;
}

/** What `insertDeposits` made of one deposit: its row, or why there is none. */
export type InsertedDeposit =
  | { row: Row; externalMemberId: string }
  | { refused: 'member_not_found' | 'duplicate_resource' };

/**
 * Many deposits of one merchant in one statement (group commit): each member resolved as
 * `resolveMember` does (the internal id first, then the external id; it must be active), the
 * rows inserted in the given order, a tx_hash already reported (before, or earlier in the list)
 * inserting nothing. One answer per deposit, in order; a refused one wrote nothing.
 */
export async function insertDeposits(
  trx: Transaction<Database>, merchantId: string, environment: Environment, deposits: readonly NewDeposit[],
): Promise<InsertedDeposit[]> {
  if (deposits.length === 0) return [];
  const { rows } = await sql<Row & { ord: string; member_found: boolean; external_member_id: string | null; inserted: boolean }>`
    WITH input AS (
      SELECT * FROM unnest(${deposits.map((d) => d.id)}::text[], ${deposits.map((d) => d.memberRef)}::text[], ${deposits.map((d) => d.asset)}::text[],
                           ${deposits.map((d) => d.network)}::text[], ${deposits.map((d) => d.amount)}::numeric[], ${deposits.map((d) => d.txHash)}::text[])
        WITH ORDINALITY AS i(id, member_ref, asset, network, amount, tx_hash, ord)
    ),
    resolved AS MATERIALIZED (
      SELECT i.*, m.id AS member_id, m.external_member_id, m.status AS member_status
      FROM input i
      LEFT JOIN LATERAL (
        SELECT c.id, c.external_member_id, c.status FROM (
          -- By the primary key alone (OFFSET 0 keeps the merchant's condition out of the scan): a
          -- plan made while the table was small used the merchant's index and filtered every
          -- member of the merchant on each deposit.
          SELECT by_id.id, by_id.external_member_id, by_id.status, 1 AS preference FROM (
            SELECT mm.id, mm.external_member_id, mm.status, mm.merchant_id, mm.environment FROM members mm WHERE mm.id = i.member_ref OFFSET 0
          ) by_id
          WHERE by_id.merchant_id = ${merchantId} AND by_id.environment = ${environment}
          UNION ALL
          SELECT mm.id, mm.external_member_id, mm.status, 2 FROM members mm
          WHERE mm.external_member_id = i.member_ref AND mm.merchant_id = ${merchantId} AND mm.environment = ${environment}
        ) c ORDER BY c.preference LIMIT 1
      ) m ON true
    ),
    inserted AS (
      INSERT INTO deposits (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status, created_at)
      SELECT r.id, ${merchantId}, ${environment}, r.member_id, r.asset, r.network, r.amount, r.tx_hash, 'credited', ${scopeNowSql(merchantId, environment)}
      FROM resolved r WHERE r.member_status = 'active'
      ORDER BY r.ord
      ON CONFLICT (merchant_id, environment, asset, tx_key) DO NOTHING
      RETURNING *
    )
    SELECT r.ord, r.member_status IS NOT DISTINCT FROM 'active' AS member_found, r.external_member_id, d.id IS NOT NULL AS inserted,
           d.seq, d.id, d.merchant_id, d.environment, d.member_id, d.asset, d.network, d.amount, d.tx_hash, d.status, d.created_at
    FROM resolved r LEFT JOIN inserted d ON d.id = r.id
    ORDER BY r.ord
  `.execute(trx);
  return rows.map((r) => {
    if (!r.member_found) return { refused: 'member_not_found' };
    if (!r.inserted) return { refused: 'duplicate_resource' };
    const { ord: _ord, member_found: _found, external_member_id, inserted: _inserted, ...row } = r;
    return { row: row as Row, externalMemberId: external_member_id ?? '' };
  });
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
