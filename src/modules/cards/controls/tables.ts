/** Card controls (migration 019): merchant-rule sets and the CVV-unblock calls. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, NullableTimestamp, Timestamp } from '../../../db/columns.js';

export interface MerchantRuleSet {
  rule_type: 'white' | 'black';
  merchant_names: string[];
  mcc_list: string[];
}

export interface CardMerchantRulesTable {
  card_id: string;
  /** null: no rules (after DELETE, kept while its removal is unconfirmed). */
  rule_type: 'white' | 'black' | null;
  merchant_names: Json<string[]>;
  mcc_list: Json<string[]>;
  synced: boolean;
  synced_at: NullableTimestamp;
  /** Our request id at the issuer for the set stored here (derived from the idempotency key). */
  request_id: string;
  /** The set the issuer last confirmed (null: none); a refused change falls back to it. */
  confirmed: ColumnType<MerchantRuleSet | null, string | null, string | null>;
  updated_at: Timestamp;
  /** Status queries made by reconciliation of an unconfirmed set (migration 020). */
  check_count: Generated<number>;
  /** When reconciliation next asks the issuer about the unconfirmed set (merchant's clock). */
  next_check_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface CardCvvUnblockCallsTable {
  id: Generated<string>;
  member_id: string;
  called_at: Timestamp;
}

export interface ControlTables {
  card_merchant_rules: CardMerchantRulesTable;
  card_cvv_unblock_calls: CardCvvUnblockCallsTable;
}
