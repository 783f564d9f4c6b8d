/** The earn area's tables (migration 017): products and orders (each order carries its position). */
import type { Generated, Selectable, ColumnType } from 'kysely';
import type { Environment, Minor, NullableTimestamp, Timestamp, MemberOwnedColumns } from '../../db/columns.js';

type NullableMinor = ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;

export type EarnType = 'flexible' | 'fixed';
export type EarnStatus = 'active' | 'settled' | 'redeemed';

export interface EarnProductsTable {
  seq: Generated<bigint>;
  id: string;
  environment: Environment;
  asset: string;
  type: EarnType;
  term_days: number;
  apr_bps: number;
  min_amount: Minor;
  max_amount: NullableMinor;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface EarnOrdersTable extends MemberOwnedColumns {
  seq: Generated<bigint>;
  id: string;
  position_id: string;
  product_id: string;
  asset: string;
  type: EarnType;
  term_days: number;
  apr_bps: number;
  amount: Minor;
  status: EarnStatus;
  status_version: number;
  accrued: Generated<Minor>;
  interest_paid: Generated<Minor>;
  days_accrued: Generated<number>;
  started_at: Timestamp;
  matures_at: NullableTimestamp;
  next_accrual_at: NullableTimestamp;
  settled_at: NullableTimestamp;
  redeemed_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type EarnProductRow = Selectable<EarnProductsTable>;
export type EarnOrderRow = Selectable<EarnOrdersTable>;

export interface EarnTables {
  earn_products: EarnProductsTable;
  earn_orders: EarnOrdersTable;
}
