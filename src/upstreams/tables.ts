/** Tables of the upstream simulators and injected behaviours (QR payment orders: src/modules/qrpay/tables.ts). */
import type { ColumnType, Generated } from 'kysely';
import type { Environment } from '../db/columns.js';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

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

/** The notifier simulator's messages (notifier.ts): what each member's "phone" received. */
export interface UpstreamSimNotificationsTable {
  id: Generated<string>;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  /** The step-up challenge the code answers. */
  reference: string;
  code: string;
  message: string;
  created_at: Generated<Date>;
}

export interface UpstreamTables {
  upstream_behaviors: UpstreamBehaviorsTable;
  upstream_sim_orders: UpstreamSimOrdersTable;
  upstream_sim_notifications: UpstreamSimNotificationsTable;
}
