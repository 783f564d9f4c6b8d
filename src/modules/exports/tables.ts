import type { Generated } from 'kysely';
import type { ScopedColumns } from '../../db/columns.js';

/** An export and its file's facts (migration 048); the file is in `export_chunks`. */
export interface ExportsTable extends ScopedColumns {
  id: string;
  seq: Generated<bigint>;
  kind: string;
  format: 'csv' | 'jsonl';
  created_gte: Date;
  created_lt: Date;
  status: 'pending' | 'completed' | 'failed';
  row_count: string | bigint | null;
  sha256: string | null;
  size_bytes: string | bigint | null;
  failure_reason: string | null;
  created_at: Date;
  completed_at: Date | null;
  /** Seven days after completion on the merchant's clock; the file (and the row) go then. */
  expires_at: Date | null;
}

/** One piece of an export's file, at most 256 KiB, in order of `n` from 0. */
export interface ExportChunksTable {
  export_id: string;
  n: number;
  data: Buffer;
}

export interface ExportTables {
  exports: ExportsTable;
  export_chunks: ExportChunksTable;
}
