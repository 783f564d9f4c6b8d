import { sql, type Insertable, type Transaction, type Updateable } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import type { ApiKeysTable } from '../../platform/tables.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';

const view = (m: { id: string; name: string; status: string; created_at: Date }) => ({
  id: m.id,
  name: m.name,
  status: m.status,
  created_at: new Date(m.created_at).toISOString(),
});

export async function createMerchant(db: Db, name: string, now: Date) {
  const row = await db
    .insertInto('merchants')
    .values({ id: newId('mch'), name, updated_at: now })
    .returning(['id', 'name', 'status', 'created_at'])
    .executeTakeFirstOrThrow();
  return view(row);
}

export async function getMerchant(db: Db, id: string) {
  const row = await db
    .selectFrom('merchants')
    .select(['id', 'name', 'status', 'created_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', 'No such merchant.');
  return view(row);
}

export async function setMerchantStatus(db: Db, id: string, status: string, now: Date) {
  const row = await db
    .updateTable('merchants')
    .set({ status, updated_at: now })
    .where('id', '=', id)
    .returning(['id', 'name', 'status', 'created_at'])
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', 'No such merchant.');
  return view(row);
}

// API keys (service.ts).

export async function insertKey(db: Db, values: Insertable<ApiKeysTable>) {
  return db.insertInto('api_keys').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findKey(db: Db, id: string) {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Writes a key's changes; answers the key as written. */
export async function updateKeyRow(db: Db, id: string, changes: Updateable<ApiKeysTable>) {
  return db.updateTable('api_keys').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** The next token generation of a key (its tokens issued so far stop). */
export const nextTokenGenerationSql = () => sql`token_generation + 1`;

export async function setKeyExpiry(trx: Transaction<Database>, id: string, expiresAt: Date, at: Date): Promise<void> {
  await trx.updateTable('api_keys').set({ expires_at: expiresAt, updated_at: at }).where('id', '=', id).execute();
}

/** The expiry of a key's first successor (the first key rotated from it), if it has one. */
export async function firstSuccessor(trx: Transaction<Database>, id: string) {
  return trx
    .selectFrom('api_keys')
    .select('expires_at')
    .where('rotated_from', '=', id)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
}

/** Serialises the demo merchant's creation across processes starting together (src/bootstrap.ts). */
export async function lockDemoMerchantBootstrap(trx: Transaction<Database>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended('bootstrap:demo-merchant', 0))`.execute(trx);
}

/** Whether the database has any merchant. */
export async function anyMerchant(db: Db): Promise<boolean> {
  const any = await db.selectFrom('merchants').select('id').limit(1).executeTakeFirst();
  return any !== undefined;
}
