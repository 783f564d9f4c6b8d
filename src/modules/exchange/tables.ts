/** The exchange area's tables (migration 017): directions, exchange orders, merchant conversions. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type {
  Environment,
  Minor,
  NullableTimestamp,
  Timestamp,
  MemberOwnedColumns,
  ScopedColumns,
} from '../../db/columns.js';

type NullableMinor = ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;

export type FeeSide = 'from' | 'to';
export type OrderStatus = 'quoted' | 'completed' | 'expired';
export type OrderKind = 'locked' | 'market';

export interface ExchangeDirectionsTable {
  seq: Generated<bigint>;
  id: string;
  environment: Environment;
  from_asset: string;
  to_asset: string;
  enabled: Generated<boolean>;
  min_kyc_level: number;
  fee_side: FeeSide;
  fee_bps: number;
  fee_fixed: Minor;
  spread_bps: number;
  min_amount: Minor;
  max_amount: NullableMinor;
  member_daily_amount: NullableMinor;
  member_daily_count: number | null;
  quote_lock_seconds: number;
  step_up_threshold: NullableMinor;
  merchant_conversion: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

/** A priced conversion of one asset into another: what an exchange order and a merchant conversion both record. */
interface PricedConversion {
  from_asset: string;
  to_asset: string;
  from_amount: Minor;
  to_amount: Minor;
  fee_amount: Minor;
  fee_asset: string;
  rate: string;
}

export interface ExchangeOrdersTable extends PricedConversion, MemberOwnedColumns {
  seq: Generated<bigint>;
  id: string;
  direction_id: string;
  kind: OrderKind;
  status: OrderStatus;
  status_version: number;
  mid_rate: string;
  quote_expires_at: NullableTimestamp;
  value_day: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  executed_at: NullableTimestamp;
  expired_at: NullableTimestamp;
  updated_at: Timestamp;
}

export interface MerchantConversionsTable extends PricedConversion, ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  direction_id: string;
  status: 'completed';
  created_at: Timestamp;
}

export type DirectionRow = Selectable<ExchangeDirectionsTable>;
export type ExchangeOrderRow = Selectable<ExchangeOrdersTable>;
export type ConversionRow = Selectable<MerchantConversionsTable>;

export interface ExchangeTables {
  exchange_directions: ExchangeDirectionsTable;
  exchange_orders: ExchangeOrdersTable;
  merchant_conversions: MerchantConversionsTable;
}
