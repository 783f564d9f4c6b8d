/** An export's file: opened for download (its stored chunks, one per pull) and the headers it is sent with. */
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { ApiError } from '../../platform/errors.js';
import type { MerchantScope } from '../../platform/caller.js';
import { findExport, readChunk } from './queries/exports.js';

export interface ExportFile {
  format: 'csv' | 'jsonl';
  size: number;
  body: Readable;
  filename: string;
}

/**
 * The file of a completed export, as a stream that reads one chunk per pull. Not yet written,
 * failed or past its seven days: `not_found` with the reason.
 */
export async function openExportFile(
  db: Kysely<Database>,
  clock: Clock,
  scope: MerchantScope,
  id: string,
): Promise<ExportFile> {
  const row = await findExport(db, scope, id);
  if (!row) throw new ApiError('not_found', 'No such export.');
  if (row.status === 'pending')
    throw new ApiError(
      'not_found',
      'The export is not written yet: wait for status completed (or the export.completed event).',
    );
  if (row.status === 'failed') throw new ApiError('not_found', 'The export failed: it has no file. Request a new one.');
  if (row.expires_at !== null && (await clock.now(db, scope)).getTime() >= new Date(row.expires_at).getTime()) {
    throw new ApiError('not_found', "The export's file has expired (kept 7 days). Request a new one.");
  }
  let n = 0;
  const body = new Readable({
    highWaterMark: 1,
    read() {
      readChunk(db, row.id, n).then(
        (chunk) => {
          n += 1;
          this.push(chunk ? Buffer.from(chunk.data) : null);
        },
        (err: unknown) => this.destroy(err as Error),
      );
    },
  });
  return {
    format: row.format,
    size: Number(row.size_bytes ?? 0),
    body,
    filename: `${row.id}.${row.format === 'csv' ? 'csv' : 'jsonl'}`,
  };
}

/** The headers a file is sent with, by the API's download and the console's alike. */
export function exportFileHeaders(file: ExportFile): Record<string, string> {
  return {
    'content-type': file.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'content-length': String(file.size),
    'content-disposition': `attachment; filename="${file.filename}"`,
    'cache-control': 'no-store',
  };
}
