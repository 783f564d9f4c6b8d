/** The remittance area's tables (migration 016): corridors, shared payees, member links, orders. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Json, Minor, NullableTimestamp, Timestamp } from '../../db/columns.js';
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

export interface RemitPayeeEntitiesTable {
  seq: Generated<bigint>;
  id: string;
  environment: Environment;
  fingerprint: string;
  country: string;
  currency: string;
  payment_method: PaymentMethod;
  clearing_system: string;
  entity_type: EntityType;
  fields: Json<Record<string, string>>;
  holder_name: string;
  holder_fingerprint: string;
  account_mask: string;
  provider_payee_ref: string | null;
  registered_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export type PayeeOutcome = 'created' | 'linked' | 'review';
export type NameCheckResult = 'match' | 'close_match' | 'no_match' | 'unavailable';

export interface RemitPayeesTable {
  seq: Generated<bigint>;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  entity_id: string;
  corridor_id: string;
  entity_type: EntityType;
  status: 'active' | 'unlinked';
  outcome: PayeeOutcome;
  name_mismatch: boolean;
  holder_name: string;
  fields: Json<Record<string, string>>;
  original_fields: Json<Record<string, string>>;
  nickname: string | null;
  favorite: Generated<boolean>;
  name_check: NameCheckResult | null;
  name_check_suggestion: string | null;
  name_checked_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  unlinked_at: NullableTimestamp;
}

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

export type CorridorRow = Selectable<RemitCorridorsTable>;
export type PayeeEntityRow = Selectable<RemitPayeeEntitiesTable>;
export type PayeeRow = Selectable<RemitPayeesTable>;
export type RemitOrderRow = Selectable<RemitOrdersTable>;

/** One row (migration 040): the payee id permutation's key and the last sequence with a plain number (payee-ids.ts). */
export interface RemitPayeeIdSchemeTable {
  singleton: Generated<boolean>;
  key: Uint8Array;
  legacy_seq_max: string | bigint;
  created_at: Generated<Date>;
}

export interface RemittanceTables {
  remit_corridors: RemitCorridorsTable;
  remit_payee_id_scheme: RemitPayeeIdSchemeTable;
  remit_payee_entities: RemitPayeeEntitiesTable;
  remit_payees: RemitPayeesTable;
  remit_orders: RemitOrdersTable;
}
