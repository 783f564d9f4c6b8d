import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { Database, Db, Environment } from '../../db/schema.js';
import type { IdempotencyKeysTable } from '../tables.js';

/** The statements of an idempotency key's record (platform/writes/idempotency.ts). */

/** A key's record as a request reads it: its endpoint, body hash and result. */
export interface StoredResult {
  endpoint: string;
  request_hash: string;
  status_code: number;
  response_body: string;
  created_at: Date;
}

/** The record of a key, when it was written within the last `windowHours`. */
export async function findFreshKey(
  db: Db,
  merchantId: string,
  environment: string,
  key: string,
  windowHours: number,
): Promise<StoredResult | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['endpoint', 'request_hash', 'status_code', 'response_body', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('environment', '=', environment as 'sandbox')
    .where('key', '=', key)
    .where('created_at', '>', sql<Date>`now() - make_interval(hours => ${windowHours})`)
    .executeTakeFirst();
}

/** Tries a key's transaction-scoped advisory lock: false when another transaction holds it. */
export async function tryKeyLock(trx: Transaction<Database>, lockName: string): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${lockName}, 0)) AS locked`.execute(trx);
  return rows[0]!.locked;
}

/** A key's record as written: its row without the time the table fills in. */
export type KeyRecord = Omit<IdempotencyKeysTable, 'created_at'>;

/**
 * Writes a key's record. A row older than the window is overwritten; so is a row with status
 * `replaceStatus` when given (a lapsed claim, overwritten by its successor).
 */
export async function upsertKeyRecord(
  db: Db,
  values: KeyRecord,
  windowHours: number,
  replaceStatus: number | undefined,
): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values(values)
    .onConflict((oc) =>
      oc
        .columns(['merchant_id', 'environment', 'key'])
        .doUpdateSet({ ...values, created_at: sql<Date>`now()` })
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<=', sql<Date>`now() - make_interval(hours => ${windowHours})`),
            ...(replaceStatus !== undefined ? [eb('idempotency_keys.status_code', '=', replaceStatus)] : []),
          ]),
        ),
    )
    .execute();
}

/** A key's record, only while it is still the claim `claim` (a successor may have taken over a lapsed one). */
export interface OwnClaim {
  merchantId: string;
  environment: Environment;
  key: string;
  claimStatus: number;
  claim: string;
}

const ownClaim = (own: OwnClaim) => (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
  eb.and({
    merchant_id: own.merchantId,
    environment: own.environment,
    key: own.key,
    status_code: own.claimStatus,
    response_body: own.claim,
  });

/** The answer replaces the claim this request still holds. */
export async function replaceOwnClaim(
  db: Kysely<Database>,
  own: OwnClaim,
  statusCode: number,
  body: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ status_code: statusCode, response_body: body })
    .where(ownClaim(own))
    .execute();
}

/** Releases the claim this request still holds. */
export async function deleteOwnClaim(db: Kysely<Database>, own: OwnClaim): Promise<void> {
  await db.deleteFrom('idempotency_keys').where(ownClaim(own)).execute();
}

/** The savepoint behind which an idempotent write's effect runs. */
export async function savepointEffect(trx: Transaction<Database>): Promise<void> {
  await sql`SAVEPOINT idempotent_effect`.execute(trx);
}

/** Undoes the effect back to `savepointEffect`. */
export async function rollbackEffect(trx: Transaction<Database>): Promise<void> {
  await sql`ROLLBACK TO SAVEPOINT idempotent_effect`.execute(trx);
}

/** Deletes the records older than the window. */
export async function deleteExpiredKeys(db: Kysely<Database>, windowHours: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', sql<Date>`now() - make_interval(hours => ${windowHours})`)
    .execute();
}
