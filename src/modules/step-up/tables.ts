import type { ColumnType } from 'kysely';
import type { Minor, Timestamp, ScopedColumns } from '../../db/columns.js';

/**
 * Step-up (docs/step-up.md). Challenges themselves are hosted-screen tickets (`hosted_tickets`,
 * purpose `step_up`, src/modules/hosted-screens/tables.ts); this area owns the operator's
 * thresholds: the amount, in minor units of `asset`, at or above which `action` needs strong
 * authentication for this merchant and environment. No row: no step-up.
 */
export interface StepUpThresholdsTable extends ScopedColumns {
  action: string;
  asset: string;
  min_amount: ColumnType<string, Minor, Minor>;
  updated_at: Timestamp;
}

export interface StepUpTables {
  step_up_thresholds: StepUpThresholdsTable;
}
