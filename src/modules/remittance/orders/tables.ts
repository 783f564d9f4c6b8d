/** Remittance orders' table (migrations 016, 036). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type {
  Minor,
  NullableTimestamp,
  Timestamp,
  MemberOwnedColumns,
  ProviderOrderColumns,
} from '../../../db/columns.js';

export type RemitOrderStatus = 'pending' | 'processing' | 'suspended' | 'completed' | 'failed' | 'returned';
export type RemitUpstreamOutcome = 'none' | 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface RemitOrdersTable
  extends MemberOwnedColumns, ProviderOrderColumns<RemitOrderStatus, RemitUpstreamOutcome> {
  seq: Generated<bigint>;
  id: string;
  payee_seq: string | bigint;
  entity_id: string;
  corridor_id: string;
  source_asset: string;
  source_amount: Minor;
  fee: Minor;
  payout_currency: string;
  payout_amount: Minor;
  rate: string;
  value_day: ColumnType<string, string, string>;
  payout_date: string | null;
  dispatch_started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  returned_at: NullableTimestamp;
  /** The return watch (return-watch.ts): questions asked since completion, and when the next is due. */
  return_checks: Generated<number>;
  return_check_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export type RemitOrderRow = Selectable<RemitOrdersTable>;
