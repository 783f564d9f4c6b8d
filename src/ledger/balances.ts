import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { accountSpec, type AccountRef } from './accounts.js';
import { minorFromDb } from './money.js';

type Db = Kysely<Database> | Transaction<Database>;

/** One account's balance in minor units (signed by its normal side); 0n when it does not exist yet. */
export async function accountBalance(db: Db, environment: Environment, ref: AccountRef, asset: string): Promise<bigint> {
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
