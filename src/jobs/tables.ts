import type { ColumnType, Generated } from 'kysely';

export interface JobsTable {
  id: Generated<bigint>;
  kind: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  dedupe_key: string | null;
  status: Generated<'pending' | 'dead'>;
  run_at: Generated<Date>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  locked_until: Date | null;
  last_error: string | null;
  created_at: Generated<Date>;
  /** The sandbox merchant whose clock `run_at` is on (migration 013); NULL: real time. */
  clock_merchant_id: Generated<string | null>;
}

export interface JobTables {
  jobs: JobsTable;
}
