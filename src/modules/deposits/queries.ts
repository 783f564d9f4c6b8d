import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { StatementLine } from '../../ledger/index.js';
import type { StatementClaims } from '../../platform/batch-statement.js';
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
 * Many deposits of one merchant in one statement (group commit), through `mwa_insert_deposits`
 * (migration 043): each member resolved as `resolveMember` does (the internal id first, then the
 * external id; it must be active), the rows inserted in the given order, a tx_hash already
 * reported (before, or earlier in the list) inserting nothing. One answer per deposit, in order;
 * a refused one wrote nothing.
 */
export async function insertDeposits(
  trx: Transaction<Database>, merchantId: string, environment: Environment, deposits: readonly NewDeposit[],
): Promise<InsertedDeposit[]> {
  if (deposits.length === 0) return [];
  const { rows } = await sql<Partial<Row> & { member_found: boolean; member_external_id: string | null }>`
    SELECT r.member_found, r.member_external_id, (r.deposit).*
    FROM mwa_insert_deposits(${merchantId}, ${environment}, ${scopeNowSql(merchantId, environment)},
                             ${deposits.map((d) => d.id)}::text[], ${deposits.map((d) => d.memberRef)}::text[], ${deposits.map((d) => d.asset)}::text[],
                             ${deposits.map((d) => d.network)}::text[], ${deposits.map((d) => d.amount)}::numeric[], ${deposits.map((d) => d.txHash)}::text[]) r
    ORDER BY r.ord
  `.execute(trx);
  return rows.map((r) => {
    if (!r.member_found) return { refused: 'member_not_found' };
    if (r.id == null) return { refused: 'duplicate_resource' };
    const { member_found: _found, member_external_id, ...row } = r;
    return { row: row as Row, externalMemberId: member_external_id ?? '' };
  });
}

/** The arguments of `mwa_deposit_batch` (migration 043) besides the claim's: one element per write. */
export interface DepositBatchArgs {
  now: RawBuilder<Date>;
  refusedStatus: (number | null)[];
  refusedBodies: (string | null)[];
  ids: string[];
  memberRefs: (string | null)[];
  assets: (string | null)[];
  networks: (string | null)[];
  amounts: (string | null)[];
  txHashes: (string | null)[];
  okStatus: number;
  bodyHeads: (string | null)[];
  bodyMids: (string | null)[];
  bodyTails: (string | null)[];
  notFoundStatus: number;
  notFoundBodies: string[];
  duplicateStatus: number;
  duplicateBodies: string[];
  entryIds: string[];
  entryKind: string;
  referenceType: string;
  lines: (StatementLine & { item: number })[];
  eventIds: string[];
  event: { type: string; object: string; status: string; statusVersion: number; livemode: boolean };
}

export interface DepositBatchRow {
  fresh: boolean | null;
  locked: boolean;
  ran: boolean;
  outcome: 'ok' | 'member_not_found' | 'duplicate_resource' | 'refused' | null;
  endpoint: string | null;
  request_hash: string | null;
  status_code: number | null;
  response_body: string | null;
  created_at: Date | null;
}

/** A group commit's batch of deposits in one autocommitted statement (`mwa_deposit_batch`): one row per write, in order. */
export async function depositBatch(db: Kysely<Database>, claims: StatementClaims, a: DepositBatchArgs): Promise<DepositBatchRow[]> {
  const l = a.lines;
  const { rows } = await sql<DepositBatchRow>`
    SELECT fresh, locked, ran, outcome, endpoint, request_hash, status_code, response_body, created_at
    FROM mwa_deposit_batch(
      p_merchant_id => ${claims.merchantId}, p_environment => ${claims.environment}, p_now => ${a.now},
      p_window_hours => ${claims.windowHours}::int, p_claim_status => ${claims.claimStatus}::int, p_merchant_lock => ${claims.merchantLock},
      p_key_locks => ${claims.keyLocks}::text[], p_keys => ${claims.keys}::text[], p_nonces => ${claims.nonces}::text[],
      p_nonce_expires => ${claims.nonceExpires}::timestamptz[], p_nonce_now => ${claims.nonceNow}::timestamptz[],
      p_endpoints => ${claims.endpoints}::text[], p_request_hashes => ${claims.requestHashes}::text[],
      p_refused_status => ${a.refusedStatus}::int[], p_refused_bodies => ${a.refusedBodies}::text[],
      p_ids => ${a.ids}::text[], p_member_refs => ${a.memberRefs}::text[], p_assets => ${a.assets}::text[], p_networks => ${a.networks}::text[],
      p_amounts => ${a.amounts}::numeric[], p_tx_hashes => ${a.txHashes}::text[],
      p_ok_status => ${a.okStatus}::int, p_body_heads => ${a.bodyHeads}::text[], p_body_mids => ${a.bodyMids}::text[], p_body_tails => ${a.bodyTails}::text[],
      p_not_found_status => ${a.notFoundStatus}::int, p_not_found_bodies => ${a.notFoundBodies}::text[],
      p_duplicate_status => ${a.duplicateStatus}::int, p_duplicate_bodies => ${a.duplicateBodies}::text[],
      p_entry_ids => ${a.entryIds}::text[], p_entry_kind => ${a.entryKind}, p_reference_type => ${a.referenceType},
      p_line_item => ${l.map((x) => x.item)}::int[], p_line_owner_type => ${l.map((x) => x.ownerType)}::text[],
      p_line_owner_id => ${l.map((x) => x.ownerId)}::text[], p_line_bucket => ${l.map((x) => x.bucket)}::text[],
      p_line_normal_side => ${l.map((x) => x.normalSide)}::text[], p_line_non_negative => ${l.map((x) => x.nonNegative)}::boolean[],
      p_line_delta => ${l.map((x) => x.delta.toString())}::numeric[], p_line_amount => ${l.map((x) => x.amount.toString())}::numeric[],
      p_event_ids => ${a.eventIds}::text[], p_event_type => ${a.event.type}, p_event_object => ${a.event.object},
      p_event_status => ${a.event.status}, p_event_status_version => ${a.event.statusVersion}::int, p_livemode => ${a.event.livemode})
    ORDER BY ord
  `.execute(db);
  return rows;
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
