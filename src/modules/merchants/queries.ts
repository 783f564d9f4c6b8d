import type { Database, Db } from '../../db/schema.js';
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
