import type { Insertable, Selectable, Updateable } from 'kysely';
import { inRows } from '../../db/in-rows.js';
import { minorFromDb } from '../../money/index.js';
import type { Environment, Db } from '../../db/schema.js';
import type { KycImagesTable, KycProfilesTable } from './tables.js';

/** Reads and writes of the KYC tables. Other areas read a member's profile status and the requirements here. */

export type KycProfile = Selectable<KycProfilesTable>;
export type KycImage = Selectable<KycImagesTable>;

export async function profileOfMember(db: Db, memberId: string, forUpdate = false): Promise<KycProfile | undefined> {
  let q = db.selectFrom('kyc_profiles').selectAll().where('member_id', '=', memberId);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function profileById(db: Db, id: string, forUpdate = false): Promise<KycProfile | undefined> {
  let q = db.selectFrom('kyc_profiles').selectAll().where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** The status of a member's profile, or null when it has none (GET /v1/members/{id}). */
export async function profileStatusOf(db: Db, memberId: string): Promise<string | null> {
  const row = await db.selectFrom('kyc_profiles').select('status').where('member_id', '=', memberId).executeTakeFirst();
  return row?.status ?? null;
}

export async function insertProfile(trx: Db, row: Insertable<KycProfilesTable>): Promise<KycProfile> {
  return trx.insertInto('kyc_profiles').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateProfile(trx: Db, id: string, set: Updateable<KycProfilesTable>): Promise<KycProfile> {
  return trx.updateTable('kyc_profiles').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function insertImage(trx: Db, row: Insertable<KycImagesTable>): Promise<void> {
  await trx.insertInto('kyc_images').values(row).execute();
}

export async function imageById(db: Db, id: string): Promise<KycImage | undefined> {
  return db.selectFrom('kyc_images').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Images no profile refers to any more (replaced by an update) are deleted: nothing is kept longer than needed. */
export async function deleteImages(trx: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0)
    await trx
      .deleteFrom('kyc_images')
      .where('id', 'in', [...ids])
      .execute();
}

export async function setMemberLevel(
  trx: Db,
  memberId: string,
  level: number,
  now: Date,
): Promise<{ id: string; kyc_level: number } | undefined> {
  return trx
    .updateTable('members')
    .set({ kyc_level: level, updated_at: now })
    .where('id', '=', memberId)
    .returning(['id', 'kyc_level'])
    .executeTakeFirst();
}

/**
 * The member's row, locked (as members' `lockMember`, which this area cannot import: members reads
 * kyc's index): submissions of one member are serialised on it.
 */
export async function lockMember(trx: Db, memberId: string) {
  return trx
    .selectFrom('members')
    .select(['id', 'external_member_id', 'kyc_level', 'status'])
    .where('id', '=', memberId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/** Profiles of one environment in one status, oldest submission first, after the cursor's `seq`. */
export async function profileQueue(
  db: Db,
  environment: Environment,
  status: string,
  afterSeq: bigint | undefined,
  limit: number,
): Promise<KycProfile[]> {
  let q = db
    .selectFrom('kyc_profiles')
    .selectAll()
    .where('environment', '=', environment)
    .where('status', '=', status as KycProfile['status']);
  if (afterSeq !== undefined) q = q.where('seq', '>', afterSeq.toString() as unknown as bigint);
  return q.orderBy('seq', 'asc').limit(limit).execute();
}

export async function requirementsOf(db: Db, environment: Environment) {
  return db
    .selectFrom('kyc_requirements')
    .select(['business', 'min_kyc_level'])
    .where('environment', '=', environment)
    .execute();
}

/** The minimum level a business requires (0 when it has no row): the gate of later areas (`kyc_required`). */
export async function minKycLevel(db: Db, environment: Environment, business: string): Promise<number> {
  const row = await db
    .selectFrom('kyc_requirements')
    .select('min_kyc_level')
    .where('environment', '=', environment)
    .where('business', '=', business)
    .executeTakeFirst();
  return row?.min_kyc_level ?? 0;
}

export async function putRequirement(
  db: Db,
  environment: Environment,
  business: string,
  level: number,
  now: Date,
): Promise<void> {
  await db
    .insertInto('kyc_requirements')
    .values({ environment, business, min_kyc_level: level, updated_at: now })
    .onConflict((oc) => oc.columns(['environment', 'business']).doUpdateSet({ min_kyc_level: level, updated_at: now }))
    .execute();
}

/** The operator's high-value thresholds of an environment, by asset (minor units). */
export async function highValueThresholds(
  db: Db,
  environment: Environment,
): Promise<Array<{ asset: string; min_amount: string }>> {
  return db
    .selectFrom('kyc_high_value_thresholds')
    .select(['asset', 'min_amount'])
    .where('environment', '=', environment)
    .orderBy('asset')
    .execute();
}

/** Sets (`minAmount` given) or removes (null) the high-value threshold of one asset. */
export async function putHighValueThreshold(
  db: Db,
  environment: Environment,
  asset: string,
  minAmount: bigint | null,
  now: Date,
): Promise<void> {
  if (minAmount === null) {
    await db
      .deleteFrom('kyc_high_value_thresholds')
      .where('environment', '=', environment)
      .where('asset', '=', asset)
      .execute();
    return;
  }
  await db
    .insertInto('kyc_high_value_thresholds')
    .values({ environment, asset, min_amount: minAmount.toString(), updated_at: now })
    .onConflict((oc) =>
      oc.columns(['environment', 'asset']).doUpdateSet({ min_amount: minAmount.toString(), updated_at: now }),
    )
    .execute();
}

/** A member's merchant and environment. */
export async function memberScopeRow(db: Db, memberId: string) {
  return db
    .selectFrom('members')
    .select(['merchant_id', 'environment'])
    .where('id', '=', memberId)
    .executeTakeFirstOrThrow();
}

/** A member's KYC level. */
export async function memberKycLevel(db: Db, memberId: string): Promise<number> {
  const row = await db.selectFrom('members').select('kyc_level').where('id', '=', memberId).executeTakeFirstOrThrow();
  return row.kyc_level;
}

/**
 * The amount (minor units) from which a transfer of each named asset needs the high-value level,
 * keyed `environment|asset`; an asset without a threshold has no key. One statement.
 */
export async function highValueThresholdsOf(
  db: Db,
  transfers: readonly { environment: Environment; asset: string }[],
): Promise<Map<string, bigint>> {
  const rows = await db
    .selectFrom('kyc_high_value_thresholds')
    .select(['environment', 'asset', 'min_amount'])
    .where(
      inRows(
        ['environment', 'asset'],
        transfers.map((t) => [t.environment, t.asset]),
      ),
    )
    .execute();
  return new Map(rows.map((r) => [`${r.environment}|${r.asset}`, minorFromDb(r.min_amount)]));
}
