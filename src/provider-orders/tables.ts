import type { Environment, NullableTimestamp, Timestamp } from '../db/columns.js';

/** The columns the lifecycle reads and writes; each area's order table has them (and more). */
export interface LifecycleOrdersTable {
  id: string;
  merchant_id: string;
  environment: Environment;
  status: string;
  status_version: number;
  upstream_outcome: string;
  provider_order_id: string | null;
  provider_status: string | null;
  check_count: number;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** An order created `pending` and handed to the provider later by a job (card top-ups, remittance payouts). */
export interface DispatchedOrdersTable extends LifecycleOrdersTable {
  /** When the provider call started (real time); null before the dispatch. */
  dispatch_started_at: NullableTimestamp;
}
