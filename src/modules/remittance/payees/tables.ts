/** Payees' tables (migrations 016, 040): the platform-level shared payees, members' links to them, the id scheme. */
import type { Generated, Selectable } from 'kysely';
import type { Environment, Json, NullableTimestamp, Timestamp, MemberOwnedColumns } from '../../../db/columns.js';
import type { EntityType, PaymentMethod } from '../corridors/tables.js';

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

export interface RemitPayeesTable extends MemberOwnedColumns {
  seq: Generated<bigint>;
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

export type PayeeEntityRow = Selectable<RemitPayeeEntitiesTable>;
export type PayeeRow = Selectable<RemitPayeesTable>;

/** One row (migration 040): the payee id permutation's key and the last sequence with a plain number (payee-ids.ts). */
export interface RemitPayeeIdSchemeTable {
  singleton: Generated<boolean>;
  key: Uint8Array;
  legacy_seq_max: string | bigint;
  created_at: Generated<Date>;
}
