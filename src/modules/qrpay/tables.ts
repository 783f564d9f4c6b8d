/** The QR payment orders table (migration 007), owned by this area. */
import type { Generated, Selectable } from 'kysely';
import type {
  Minor,
  NullableTimestamp,
  Timestamp,
  MemberOwnedColumns,
  ProviderOrderColumns,
} from '../../db/columns.js';

export type QrPayOrderStatus = 'processing' | 'suspended' | 'completed' | 'failed' | 'refunded';
export type QrPayUpstreamOutcome = 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface QrPayOrdersTable
  extends MemberOwnedColumns, ProviderOrderColumns<QrPayOrderStatus, QrPayUpstreamOutcome> {
  seq: Generated<bigint>;
  id: string;
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
  call_started_at: Timestamp;
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
