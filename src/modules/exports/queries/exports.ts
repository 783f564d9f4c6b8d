import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import type { Database, Db } from '../../../db/schema.js';
import { inScope } from '../../../db/owned-by.js';
import { withPrefix } from '../../../platform/ids.js';
import type { MerchantScope } from '../../../platform/caller.js';
import type { ExportsTable } from '../tables.js';

/** The statements of exports and their stored chunks (service.ts); each kind's row reads are in kinds.ts. */

/** The shape an export id must have to be looked up at all. */
const idShape = /^[A-Za-z0-9_.:-]{1,100}$/;

export async function insertExport(db: Db, row: Insertable<ExportsTable>): Promise<void> {
  await db.insertInto('exports').values(row).execute();
}

export function exportsOf(db: Db, scope: MerchantScope) {
  return db
    .selectFrom('exports')
    .select([
      'seq',
      'id',
      'kind',
      'format',
      'status',
      'row_count',
      'sha256',
      'size_bytes',
      'created_at',
      'completed_at',
      'expires_at',
    ])
    .where(inScope(scope));
}

export async function findExport(db: Db, scope: MerchantScope, id: string) {
  if (!idShape.test(id)) return undefined;
  return exportsOf(db, scope).where('id', '=', withPrefix('exp', id)).executeTakeFirst();
}

export async function readChunk(db: Db, exportId: string, n: number) {
  return db
    .selectFrom('export_chunks')
    .select('data')
    .where('export_id', '=', exportId)
    .where('n', '=', n)
    .executeTakeFirst();
}

export async function exportById(db: Db, id: string) {
  return db.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deleteChunks(db: Db, exportId: string): Promise<void> {
  await db.deleteFrom('export_chunks').where('export_id', '=', exportId).execute();
}

export async function insertChunk(db: Db, exportId: string, n: number, data: Buffer): Promise<void> {
  await db.insertInto('export_chunks').values({ export_id: exportId, n, data }).execute();
}

/** Writes a pending export's outcome; answers how many rows changed (0: it was no longer pending). */
export async function completePendingExport(db: Db, id: string, changes: Updateable<ExportsTable>): Promise<number> {
  const done = await db
    .updateTable('exports')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(done.numUpdatedRows);
}

/** A pending export goes `failed`; answers its scope, or nothing if it was not pending. */
export async function failPendingExport(db: Db, id: string, reason: string) {
  return db
    .updateTable('exports')
    .set({ status: 'failed', failure_reason: reason })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning(['merchant_id', 'environment'])
    .executeTakeFirst();
}

export async function setExportCompletedAt(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('exports').set({ completed_at: at }).where('id', '=', id).execute();
}

/** Removes exports past their seven days (each merchant's clock), a bounded batch per call; answers how many. */
export async function deleteExpiredExports(db: Kysely<Database>, limit = 100): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    DELETE FROM exports WHERE id IN (
      SELECT x.id FROM exports x
      WHERE x.expires_at IS NOT NULL
        AND x.expires_at <= now() + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id =
          x.merchant_id AND x.environment = 'sandbox'), 0) * interval '1 millisecond'
      ORDER BY x.expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING id`.execute(db);
  return rows.length;
}
