/** The corridor catalogue's table (migration 016). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Json, Minor, Timestamp } from '../../../db/columns.js';
import type { FieldSpec } from './contracts.js';

export type EntityType = 'INDIVIDUAL' | 'COMPANY';
export type PaymentMethod = 'LOCAL' | 'SWIFT';
type NullableMinor = ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;

export interface RemitCorridorsTable {
  seq: Generated<bigint>;
  id: string;
  environment: Environment;
  country: string;
  currency: string;
  payment_method: PaymentMethod;
  clearing_system: string;
  enabled: Generated<boolean>;
  contracts: Json<Partial<Record<EntityType, FieldSpec[]>>>;
  restricted_jurisdictions: Json<string[]>;
  confirmable_routing_types: Json<string[]>;
  min_kyc_level: number;
  fee_bps: number;
  fee_fixed: Minor;
  fx_spread_bps: number;
  payout_min: Minor;
  member_single_max: NullableMinor;
  member_daily_max: NullableMinor;
  merchant_single_max: NullableMinor;
  merchant_daily_max: NullableMinor;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export type CorridorRow = Selectable<RemitCorridorsTable>;
