/** The card area's tables (migration 018): products, BIN authorisations, applications, supplement images, cards. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Json, Minor, NullableTimestamp, Timestamp } from '../../db/columns.js';

export type FormFactor = 'virtual' | 'physical';
export type CardStatus = 'unactivated' | 'active' | 'closing' | 'closed' | 'expired' | 'replaced';
export type ApplicationStatus = 'pending' | 'need_docs' | 'approved' | 'rejected' | 'failed';
export type SupplementStatus = 'pending' | 'submitted';
export type LimitsSync = 'synced' | 'pending' | 'failed';
export type InventoryStatus = 'in_production' | 'shipped' | 'binding' | 'bound' | 'voided';

export interface Address {
  address: string;
  city: string;
  state?: string;
  country: string;
  postal_code: string;
}

type MinorColumn = ColumnType<string, Minor, Minor>;
type MinorDefault = ColumnType<string, Minor | undefined, Minor>;

export interface CardProductsTable {
  seq: Generated<string>;
  environment: Environment;
  form_factor: FormFactor;
  currency: string;
  bin: string;
  scheme: string;
  card_types: Json<string[]>;
  source_assets: Json<string[]>;
  opening_fee: MinorColumn;
  topup_min: MinorColumn;
  topup_max_single: MinorColumn;
  max_single: MinorColumn;
  max_daily: MinorColumn;
  max_monthly: MinorColumn;
  billing_address_updatable: boolean;
  card_lists_supported: boolean;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface CardBinAuthorizationsTable {
  merchant_id: string;
  environment: Environment;
  bin: string;
  created_at: Generated<Date>;
}

export interface CardApplicationsTable {
  seq: Generated<string>;
  /** `cap_<uuid>` */
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  product_seq: string;
  source_asset: string;
  /** The opening fee in minor units of `source_asset`. */
  fee: MinorColumn;
  shipping_address: ColumnType<Address | null, string | null, string | null>;
  status: ApplicationStatus;
  status_version: number;
  /** What the issuer answered to the submission: `unknown` after a timeout or 5xx (never refunded on it). */
  upstream_outcome: 'none' | 'accepted' | 'unknown';
  upstream_ref: string | null;
  supplement_status: SupplementStatus | null;
  supplement_expires_at: NullableTimestamp;
  card_id: string | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Status queries made by reconciliation of an unknown submission outcome (migration 020). */
  check_count: Generated<number>;
  /** When reconciliation next asks the issuer (merchant's clock); null: nothing to reconcile. */
  next_check_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface CardSupplementImagesTable {
  id: string;
  application_id: string;
  member_id: string;
  kind: 'document' | 'selfie';
  content_type: string;
  size_bytes: number;
  key_label: string;
  iv: Buffer;
  ciphertext: Buffer;
  auth_tag: Buffer;
  created_at: Generated<Date>;
}

export interface CardsTable {
  seq: Generated<string>;
  /** `crd_<uuid>` */
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  application_id: string;
  product_seq: string;
  form_factor: FormFactor;
  currency: string;
  status: CardStatus;
  status_version: number;
  /** The issuer's reference of the card (never the card number). */
  upstream_ref: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  billing_address: ColumnType<Address | null, string | null | undefined, string | null>;
  cvv_blocked: Generated<boolean>;
  inventory_status: InventoryStatus | null;
  activation_failures: Generated<number>;
  locked_until: NullableTimestamp;
  limit_single: MinorDefault;
  limit_daily: MinorDefault;
  limit_monthly: MinorDefault;
  /** Bumped by each accepted `PATCH .../limits`: the push job of an older version stands down. */
  limits_version: Generated<number>;
  /** `pending` while the push to the issuer runs; `failed` when it failed (only tightening kept). */
  limits_sync: ColumnType<LimitsSync, LimitsSync | undefined, LimitsSync>;
  /** The limits the issuer last confirmed (what a failed loosening falls back to). */
  confirmed_single: MinorDefault;
  confirmed_daily: MinorDefault;
  confirmed_monthly: MinorDefault;
  activated_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /**
   * The activation request whose issuer answer was lost (504/502): a digest of its idempotency
   * key, body hash and the step-up challenge it consumed (migration 020). Its retry may reuse that
   * challenge; null once the issuer answered.
   */
  activation_attempt_ref: ColumnType<string | null, string | null | undefined, string | null>;
  activation_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

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

export type CardProductRow = Selectable<CardProductsTable>;
export type CardApplicationRow = Selectable<CardApplicationsTable>;
export type CardRow = Selectable<CardsTable>;

export interface CardTables {
  card_products: CardProductsTable;
  card_bin_authorizations: CardBinAuthorizationsTable;
  card_applications: CardApplicationsTable;
  card_supplement_images: CardSupplementImagesTable;
  cards: CardsTable;
  card_merchant_rules: CardMerchantRulesTable;
  card_cvv_unblock_calls: CardCvvUnblockCallsTable;
}
