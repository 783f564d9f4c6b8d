import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { stringify } from 'csv-stringify/sync';
import type { Database, Db } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { ApiError, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { mapPage, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { enqueue } from '../../jobs/queries.js';
import { recordEvent } from '../../events/index.js';
import { exhausted, kindSpec, type ExportKind, type Record_ } from './queries/kinds.js';
import {
  deleteChunks,
  completePendingExport,
  exportById,
  failPendingExport,
  findExport,
  insertChunk,
  insertExport,
  setExportCompletedAt,
  exportsOf,
} from './queries/exports.js';
import type { ExportsTable } from './tables.js';
import type { MerchantScope } from '../../platform/caller.js';
import { rowScope } from '../../db/owned-by.js';

/**
 * Exports (extensions 13, docs/exports.md): requested by the API, written by a job in keyset
 * batches of rows into 256 KiB chunks in the database, read back one chunk at a time. Neither side
 * holds more than a batch of rows and a chunk.
 */

export const exportJobKind = 'export.write';
/** Rows read per statement while writing. */
export const exportBatchRows = 1_000;
/** Bytes per stored chunk. */
export const exportChunkBytes = 256 * 1024;
/** Files are kept this long after completion (on the merchant's clock). */
export const exportKeepMs = 7 * 24 * 3600 * 1000;
/** Attempts of the writing job before the export is `failed`. */
export const exportAttempts = 3;

export const exportErrors = {
  create: ['invalid_request'],
  get: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

type Row = Pick<
  ExportsTable,
  'id' | 'kind' | 'status' | 'row_count' | 'sha256' | 'size_bytes' | 'created_at' | 'completed_at'
> & { format: 'csv' | 'jsonl'; expires_at: Date | null };

export interface ExportView {
  id: string;
  kind: string;
  status: 'pending' | 'completed' | 'failed';
  row_count: number | null;
  sha256: string | null;
  size_bytes: number | null;
  created_at: string;
  completed_at: string | null;
}

export function exportView(r: Row): ExportView {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    row_count: r.row_count === null ? null : Number(r.row_count),
    sha256: r.sha256,
    size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
    created_at: new Date(r.created_at).toISOString(),
    completed_at: r.completed_at === null ? null : new Date(r.completed_at).toISOString(),
  };
}

export async function createExport(
  trx: Transaction<Database>,
  clock: Clock,
  scope: MerchantScope,
  body: { kind: ExportKind; created_gte: string; created_lt: string; format?: 'csv' | 'jsonl' },
): Promise<{ id: string; kind: string; status: 'pending'; created_at: string }> {
  const gte = new Date(body.created_gte);
  const lt = new Date(body.created_lt);
  if (Number.isNaN(gte.getTime()) || Number.isNaN(lt.getTime()))
    throw new ApiError('invalid_request', 'created_gte and created_lt must be ISO 8601 date-times with a time zone.');
  if (gte.getTime() >= lt.getTime()) throw new ApiError('invalid_request', 'created_gte must be before created_lt.');
  const now = await clock.now(trx, scope);
  const row = {
    id: newId('exp'),
    merchant_id: scope.merchantId,
    environment: scope.environment,
    kind: body.kind,
    format: body.format ?? ('csv' as const),
    created_gte: gte,
    created_lt: lt,
    status: 'pending' as const,
    created_at: now,
  };
  await insertExport(trx, row);
  await enqueue(trx, {
    kind: exportJobKind,
    payload: { id: row.id },
    dedupeKey: `export:${row.id}`,
    maxAttempts: exportAttempts,
  });
  return { id: row.id, kind: row.kind, status: 'pending', created_at: now.toISOString() };
}

export async function listExports(db: Db, scope: MerchantScope, page: PageParams) {
  return mapPage(await keysetPage(exportsOf(db, scope), page), exportView);
}

export async function getExport(db: Db, scope: MerchantScope, id: string): Promise<ExportView> {
  const row = await findExport(db, scope, id);
  if (!row) throw new ApiError('not_found', 'No such export.');
  return exportView(row);
}

/**
 * Columns whose text comes from outside the service (a card network's or QR payee's merchant name,
 * a merchant's external ids and tx hashes, a member's address): in CSV, a cell of theirs that a
 * spreadsheet would run as a formula is prefixed with `'` (OWASP's CSV injection advice). Only
 * these: a negative amount (`-5.00`) is a number, not a formula. JSON lines are left as they are.
 */
const outsideText = new Set(['merchant_name', 'external_member_id', 'tx_hash', 'address']);
const formulaStart = /^[=+\-@\t\r]/;

export function csvCell(column: string, value: string): string {
  return outsideText.has(column) && formulaStart.test(value) ? `'${value}` : value;
}

/** Serialises records of one batch; the header goes before the first. */
function serialise(
  format: 'csv' | 'jsonl',
  columns: readonly string[],
  records: readonly Record_[],
  header: boolean,
): string {
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r, columns as string[])}\n`).join('');
  if (records.length === 0 && !header) return '';
  const cells = records.map((r) =>
    columns.map((c) => {
      const v = r[c];
      return typeof v === 'string' ? csvCell(c, v) : (v ?? '');
    }),
  );
  return stringify(cells, { header, columns: columns as string[], record_delimiter: 'unix' });
}

/**
 * Writes one export's file (the job): deletes what an earlier attempt left, walks the kind's
 * rows in batches, appends each batch's text to a buffer that is stored as a chunk whenever it
 * reaches 256 KiB, hashes as it goes, then marks the export completed with its event, in one
 * transaction with the last chunk.
 */
export async function writeExport(db: Kysely<Database>, clock: Clock, id: string): Promise<void> {
  const ex = await exportById(db, id);
  if (!ex || ex.status !== 'pending') return;
  const scope = rowScope(ex);
  const spec = kindSpec(ex.kind as ExportKind);
  await deleteChunks(db, id);
  const hash = createHash('sha256');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let n = 0;
  let size = 0;
  let rows = 0;
  const flush = async (db: Db, all: boolean) => {
    while (pendingBytes >= exportChunkBytes || (all && pendingBytes > 0)) {
      const joined = Buffer.concat(pending);
      const piece = joined.subarray(0, Math.min(exportChunkBytes, joined.length));
      const rest = joined.subarray(piece.length);
      await insertChunk(db, id, n, piece);
      n += 1;
      pending = rest.length ? [Buffer.from(rest)] : [];
      pendingBytes = rest.length;
    }
  };
  const append = (text: string) => {
    if (text === '') return;
    const bytes = Buffer.from(text, 'utf8');
    hash.update(bytes);
    size += bytes.length;
    pending.push(bytes);
    pendingBytes += bytes.length;
  };
  const window = {
    merchantId: ex.merchant_id,
    environment: ex.environment,
    createdGte: new Date(ex.created_gte),
    createdLt: new Date(ex.created_lt),
  };
  if (ex.format === 'csv') append(serialise('csv', spec.columns, [], true));
  let after: string | undefined;
  for (;;) {
    const { seq, records } = await spec.batch(db, window, after, exportBatchRows);
    append(serialise(ex.format, spec.columns, records, false));
    rows += records.length;
    await flush(db, false);
    if (exhausted(after, seq)) break;
    after = seq;
  }
  await db.transaction().execute(async (trx) => {
    await flush(trx, true);
    const now = await clock.now(trx, scope);
    const done = await completePendingExport(trx, id, {
      status: 'completed',
      row_count: String(rows),
      sha256: hash.digest('hex'),
      size_bytes: String(size),
      completed_at: now,
      expires_at: new Date(now.getTime() + exportKeepMs),
    });
    if (done === 0) throw new Error(`export ${id} changed while it was written`);
    await recordEvent(trx, {
      ...scope,
      type: 'export.completed',
      object: 'export',
      objectId: id,
      externalMemberId: null,
      status: 'completed',
      statusVersion: 1,
    });
  });
}

/** The export could not be written after its attempts: `failed`, its chunks gone, with its event. */
export async function failExport(db: Kysely<Database>, clock: Clock, id: string, reason: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const ex = await failPendingExport(trx, id, reason.slice(0, 500));
    if (!ex) return;
    const scope = rowScope(ex);
    await setExportCompletedAt(trx, id, await clock.now(trx, scope));
    await deleteChunks(trx, id);
    await recordEvent(trx, {
      ...scope,
      type: 'export.failed',
      object: 'export',
      objectId: id,
      externalMemberId: null,
      status: 'failed',
      statusVersion: 1,
    });
  });
}

export { exportKinds, type ExportKind } from './queries/kinds.js';
