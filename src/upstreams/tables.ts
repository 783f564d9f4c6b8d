/** Tables of upstream orders, injected behaviours and QR payments. */
import type { ColumnType, Generated } from 'kysely';
import type { Environment } from '../db/columns.js';

type Minor = string | bigint;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** A sandbox merchant's preset for one upstream; absent (or expired) means `success`. */
export interface UpstreamBehaviorsTable {
  merchant_id: string;
  environment: 'sandbox';
  upstream: string;
  behavior: 'reject' | 'timeout' | 'unknown' | 'unknown_status';
  expires_at: Date | string;
  created_at: Generated<Date>;
}

export type SimOrderStatus = 'processing' | 'succeeded' | 'failed' | 'refunded';

/**
 * The built-in simulator's own books: what "the provider" knows about each request, keyed by our
 * request id. It plays the provider's side, so it is written outside our transactions.
 */
export interface UpstreamSimOrdersTable {
  upstream: string;
  request_id: string;
  merchant_id: string;
  environment: Environment;
  provider_order_id: string;
  operation: string;
  status: SimOrderStatus;
  /** What `status` becomes once `settle_at` has passed. */
  final_status: SimOrderStatus;
  settle_at: Date | string;
  /** Created under `unknown_status`: its status query answers the sentinel. */
  unknown_status: Generated<boolean>;
  detail: ColumnType<Record<string, string>, string, string>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

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

export interface UpstreamTables {
  upstream_behaviors: UpstreamBehaviorsTable;
  upstream_sim_orders: UpstreamSimOrdersTable;
  qrpay_orders: QrPayOrdersTable;
}
