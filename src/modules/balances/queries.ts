import { sql, type Insertable, type Transaction } from 'kysely';
import { readRowsByKey } from '../../db/direct.js';
import type { Database, Environment, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import type { MerchantScope } from '../../platform/caller.js';
import type { BalanceMonitorsTable, CustodyAdjustmentsTable, PrepaidCreditsTable } from './tables.js';
import { baseBucket, formatAmount, memberBuckets, minorFromDb, type MemberBucket } from '../../money/index.js';

/** Balance views read from the ledger's accounts: a member's buckets and a merchant's custody and prepaid. */

/** A member's buckets of one asset as decimal strings at the asset's scale. */
export interface MemberBalance {
  asset: string;
  available: string;
  frozen: string;
  withdrawing: string;
  earn: string;
  card: string;
  /** The sum of the five buckets. */
  total: string;
}

export interface MerchantBalance {
  asset: string;
  custody: string;
  prepaid_available: string;
}

interface BalanceRow {
  owner_id: string;
  asset: string;
  scale: number;
  /** The asset's `enabled`: a disabled asset is listed only while the owner holds some of it. */
  enabled: boolean;
  bucket: string;
  balance: string;
}

/**
 * The accounts of many owners of one type, in every asset (enabled or not: `listed` decides), in
 * no order (`byAsset` sorts; an `order by` made PostgreSQL's generic plan scan every owner's
 * accounts for the index order). No filter on `assets`: the asset's `enabled` comes with its scale,
 * so the statement and its plan stay those of the hot read (docs/performance.md). The
 * statement is written once, not built per call: the member's balances are the hot authenticated
 * read (issue 16), and building and compiling the query with Kysely's builder cost ~15 % of that
 * request's CPU. The text is what the builder produces (a test compares them), and it takes the
 * owners as an array so that the reads of one turn of the event loop share it (`readRowsByKey`).
 */
const ownerAccountsSql =
  'select "a"."owner_id", "a"."asset", "s"."scale", "s"."enabled", "a"."bucket", "a"."balance" from ' +
  '"ledger_accounts" as "a" ' +
  'inner join "assets" as "s" on "s"."code" = "a"."asset" ' +
  'where "a"."environment" = $1 and "a"."owner_type" = $2 and "a"."owner_id" = any($3::text[])';

function ownerAccounts(
  db: Db,
  environment: Environment,
  ownerType: 'member' | 'merchant',
  ownerId: string,
): Promise<BalanceRow[]> {
  return readRowsByKey<BalanceRow>(db, ownerAccountsSql, [environment, ownerType], ownerId, 'owner_id');
}

/** The same statement through the query builder (a test compares the two). */
export function ownerAccountsBuilt(
  db: Db,
  environment: Environment,
  ownerType: 'member' | 'merchant',
  ownerIds: string[],
) {
  return db
    .selectFrom('ledger_accounts as a')
    .innerJoin('assets as s', 's.code', 'a.asset')
    .select(['a.owner_id', 'a.asset', 's.scale', 's.enabled', 'a.bucket', 'a.balance'])
    .where('a.environment', '=', environment)
    .where('a.owner_type', '=', ownerType)
    .where('a.owner_id', '=', sql<string>`any(${ownerIds}::text[])`);
}

export { ownerAccountsSql };

interface AssetGroup {
  asset: string;
  scale: number;
  enabled: boolean;
  buckets: Map<string, bigint>;
}

/** Rows grouped by asset, in code order, as bucket → minor units. */
function byAsset(rows: BalanceRow[]): AssetGroup[] {
  const out = new Map<string, AssetGroup>();
  for (const row of rows) {
    const group = out.get(row.asset) ?? {
      asset: row.asset,
      scale: row.scale,
      enabled: row.enabled,
      buckets: new Map<string, bigint>(),
    };
    // A card's accounts (`card:crd_…`, `card_held:crd_…`) add up to the member's `card` bucket.
    const bucket = baseBucket(row.bucket) === 'card_held' ? 'card' : baseBucket(row.bucket);
    group.buckets.set(bucket, (group.buckets.get(bucket) ?? 0n) + minorFromDb(row.balance));
    out.set(row.asset, group);
  }
  return [...out.values()].sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0));
}

/**
 * Which assets a balance list shows: every enabled asset the owner has an account in (zero
 * balances too), and a disabled one while any balance the list shows is not zero. Disabling an
 * asset stops new business in it, never hides money still held (docs/ledger.md, "Balances").
 */
function listed(group: AssetGroup, shown: readonly string[]): boolean {
  return group.enabled || shown.some((b) => (group.buckets.get(b) ?? 0n) !== 0n);
}

const merchantShown = ['custody', 'prepaid'] as const;

/**
 * The owner's accounts as they were at `asOf`: each balance the sum of its postings created at or
 * before it (signed by the account's normal side), in one statement (one snapshot). Only
 * accounts with a posting by then: an account first used later did not exist yet. Each sum is a
 * range of the index `postings_account_time (account_id, created_at) INCLUDE (amount)` (migration
 * 045): it reads that account's postings up to the instant and nothing else (docs/ledger.md "As of").
 */
async function ownerAccountsAsOf(
  db: Db,
  environment: Environment,
  ownerType: 'member' | 'merchant',
  ownerId: string,
  asOf: Date,
): Promise<BalanceRow[]> {
  const { rows } = await sql<BalanceRow>`
    SELECT a.owner_id, a.asset, s.scale, s.enabled, a.bucket,
           (CASE WHEN a.normal_side = 'debit' THEN t.total ELSE -t.total END)::text AS balance
    FROM ledger_accounts a
    JOIN assets s ON s.code = a.asset
    CROSS JOIN LATERAL (SELECT sum(p.amount) AS total, count(*) AS n FROM postings p WHERE p.account_id = a.id AND
      p.created_at <= ${asOf}) t
    WHERE a.environment = ${environment} AND a.owner_type = ${ownerType} AND a.owner_id = ${ownerId} AND t.n > 0
  `.execute(db);
  return rows;
}

const accountRows = (
  db: Db,
  environment: Environment,
  ownerType: 'member' | 'merchant',
  ownerId: string,
  asOf: Date | undefined,
) =>
  asOf === undefined
    ? ownerAccounts(db, environment, ownerType, ownerId)
    : ownerAccountsAsOf(db, environment, ownerType, ownerId, asOf);

/**
 * Every enabled asset the member has any account in, and every disabled one it still holds some of;
 * with `asOf`, as they were at that instant.
 */
export async function memberBalances(
  db: Db,
  environment: Environment,
  memberId: string,
  asOf?: Date,
): Promise<MemberBalance[]> {
  const groups = byAsset(await accountRows(db, environment, 'member', memberId, asOf)).filter((g) =>
    listed(g, memberBuckets),
  );
  return groups.map(({ asset, scale, buckets }) => {
    const get = (b: MemberBucket) => buckets.get(b) ?? 0n;
    const total = memberBuckets.reduce((sum, b) => sum + get(b), 0n);
    return {
      asset,
      available: formatAmount(get('available'), scale),
      frozen: formatAmount(get('frozen'), scale),
      withdrawing: formatAmount(get('withdrawing'), scale),
      earn: formatAmount(get('earn'), scale),
      card: formatAmount(get('card'), scale),
      total: formatAmount(total, scale),
    };
  });
}

/**
 * Every enabled asset the merchant has any account in, and every disabled one it still holds
 * custody or prepaid of; with `asOf`, as they were at that instant.
 */
export async function merchantBalances(
  db: Db,
  environment: Environment,
  merchantId: string,
  asOf?: Date,
): Promise<MerchantBalance[]> {
  const groups = byAsset(await accountRows(db, environment, 'merchant', merchantId, asOf)).filter((g) =>
    listed(g, merchantShown),
  );
  return groups.map(({ asset, scale, buckets }) => ({
    asset,
    custody: formatAmount(buckets.get('custody') ?? 0n, scale),
    prepaid_available: formatAmount(buckets.get('prepaid') ?? 0n, scale),
  }));
}

// ---------------------------------------------------------------------------------------------
// Balance monitors (monitors.ts), prepaid credits and custody adjustments (service.ts)

export async function countMonitors(db: Db, scope: MerchantScope): Promise<number> {
  const { count } = await db
    .selectFrom('balance_monitors')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where(inScope(scope))
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertMonitor(trx: Transaction<Database>, row: Insertable<BalanceMonitorsTable>): Promise<void> {
  await trx.insertInto('balance_monitors').values(row).execute();
}

/** The scope's monitors with their asset's scale (paged by the caller). */
export function monitorsOf(db: Db, scope: MerchantScope) {
  return db
    .selectFrom('balance_monitors as b')
    .innerJoin('assets as s', 's.code', 'b.asset')
    .select(['b.seq', 'b.id', 'b.balance', 'b.asset', 'b.below', 'b.state', 's.scale'])
    .where('b.merchant_id', '=', scope.merchantId)
    .where('b.environment', '=', scope.environment);
}

export const findMonitor = (db: Db, scope: MerchantScope, id: string) =>
  monitorsOf(db, scope).where('b.id', '=', id).executeTakeFirst();

/** Deletes the scope's monitor; its id, or undefined when there is none. */
export function deleteMonitorRow(trx: Transaction<Database>, scope: MerchantScope, id: string) {
  return trx
    .deleteFrom('balance_monitors')
    .where('id', '=', id)
    .where(inScope(scope))
    .returning('id')
    .executeTakeFirst();
}

export function insertPrepaidCredit(
  trx: Transaction<Database>,
  values: Insertable<PrepaidCreditsTable>,
): Promise<{ id: string }> {
  return trx.insertInto('prepaid_credits').values(values).returning('id').executeTakeFirstOrThrow();
}

export async function insertCustodyAdjustment(
  trx: Transaction<Database>,
  values: Insertable<CustodyAdjustmentsTable>,
): Promise<void> {
  await trx.insertInto('custody_adjustments').values(values).execute();
}
