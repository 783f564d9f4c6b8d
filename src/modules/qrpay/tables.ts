/** The QR payment orders table (migration 007), owned by this area. */
import type { Generated, Selectable } from 'kysely';
import type { Environment, Minor, NullableTimestamp, Timestamp } from '../../db/columns.js';

export type QrPayOrderStatus = 'processing' | 'suspended' | 'completed' | 'failed' | 'refunded';
export type QrPayUpstreamOutcome = 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface QrPayOrdersTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  idempotency_key: string;
  request_hash: string;
  scheme: string;
  merchant_name: string;
  merchant_city: string;
  country: string;
  asset: string;
  amount: Minor;
  note: string | null;
  qr_code: string;
  status: QrPayOrderStatus;
  status_version: number;
  upstream_outcome: QrPayUpstreamOutcome;
  provider_order_id: string | null;
  provider_status: string | null;
  failure_reason: string | null;
  call_started_at: Timestamp;
  check_count: Generated<number>;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  refunded_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export type QrOrderRow = Selectable<QrPayOrdersTable>;

export interface QrPayTables {
  qrpay_orders: QrPayOrdersTable;
}
