/** Remittance orders' table (migrations 016, 036). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Minor, NullableTimestamp, Timestamp } from '../../../db/columns.js';

export type RemitOrderStatus = 'pending' | 'processing' | 'suspended' | 'completed' | 'failed' | 'returned';
export type RemitUpstreamOutcome = 'none' | 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface RemitOrdersTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
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
  status: RemitOrderStatus;
  status_version: number;
  upstream_outcome: RemitUpstreamOutcome;
  provider_order_id: string | null;
  provider_status: string | null;
  failure_reason: string | null;
  dispatch_started_at: NullableTimestamp;
  check_count: Generated<number>;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
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
