import { sql } from 'kysely';
import type { Environment, Db } from '../../db/schema.js';
import { accountSpec, type AccountRef, type PlatformBucket } from '../accounts.js';
import { minorFromDb } from '../amounts.js';

/** One account's balance in minor units (signed by its normal side); 0n when it does not exist yet. */
export async function accountBalance(
  db: Db,
  environment: Environment,
  ref: AccountRef,
  asset: string,
): Promise<bigint> {
  const spec = accountSpec(ref);
  const row = await db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('environment', '=', environment)
    .where('owner_type', '=', spec.ownerType)
    .where('owner_id', '=', spec.ownerId)
    .where('asset', '=', asset)
    .where('bucket', '=', spec.bucket)
    .executeTakeFirst();
  return row ? minorFromDb(row.balance) : 0n;
}

/**
 * The platform's whole balance of one bucket and asset in an environment (minor units, signed by
 * the bucket's normal side): the sum of its accounts kept for each merchant and of the shared row
 * of before migration 026 (`owner_id` ''), if any. One merchant's part: `accountBalance` with
 * `platformAccount(bucket, merchantId)`.
 */
export async function platformTotal(
  db: Db,
  environment: Environment,
  bucket: PlatformBucket,
  asset: string,
): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select(sql<string>`coalesce(sum(balance), 0)`.as('total'))
    .where('environment', '=', environment)
    .where('owner_type', '=', 'platform')
    .where('asset', '=', asset)
    .where('bucket', '=', bucket)
    .executeTakeFirst();
  return row ? minorFromDb(row.total) : 0n;
}
