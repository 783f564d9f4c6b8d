/** The card area's tables (migration 018): products, BIN authorisations, applications, supplement images, cards. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Json, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { MinorColumn, MinorDefault } from './shared/tables.js';
import type { TopUpTables } from './topups/tables.js';
import type { TransactionTables } from './transactions/tables.js';

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
  /** Charged on a replacement for a security reason (migration 022), card-currency minor units. */
  replacement_fee: MinorDefault;
  /** Charged with it for a physical card (the new card is posted). */
  postage_fee: MinorDefault;
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
  /** Migration 022 (replacements.ts, closing.ts): set when a security replacement froze the card; a frozen card never spends. */
  frozen_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The card this one replaces, and the one that replaced it. */
  replaces: ColumnType<string | null, string | null | undefined, string | null>;
  replaced_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** While `closing`: the status it was closed from (a refusal by the issuer goes back to it). */
  closing_from: ColumnType<'unactivated' | 'active' | null, 'unactivated' | 'active' | null | undefined, 'unactivated' | 'active' | null>;
  /** While `closing`: what the issuer last answered to the cancellation (`timeout`/`unknown`: reconciled). */
  close_outcome: ColumnType<'pending' | 'timeout' | 'unknown' | null, 'pending' | 'timeout' | 'unknown' | null | undefined, 'pending' | 'timeout' | 'unknown' | null>;
  close_checks: Generated<number>;
  close_next_check_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When the card's spendable balance went back to the member's available balance (once). */
  balance_returned_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
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

// ---------------------------------------------------------------------------------------------
// Card money (migration 021): top-ups in topups/tables.ts, transactions in transactions/tables.ts.
/** Top-up pricing of a product (migration 021). */
export interface CardProductsTable {
  /** Fee on a top-up, basis points of the amount (rounded up), in the source asset. */
  topup_fee_bps: ColumnType<number, number | undefined, number>;
  /** Fixed part of the top-up fee, minor units of the card currency (taken 1:1 into the source asset, rounded up). */
  topup_fee_fixed: MinorDefault;
  /** The FX markup over mid on a cross-currency top-up: never disclosed (the quote estimates 1:1). */
  topup_fx_markup_bps: ColumnType<number, number | undefined, number>;
}

export interface CardTables extends TopUpTables, TransactionTables {}

// The card lifecycle (migration 022): replacement requests and the executor's progress.

export type ReplacementReason =
  | 'pan_leaked' | 'stolen' | 'pin_locked' | 'damaged' | 'user_request' | 'expiring'
  | 'lost_in_transit' | 'not_received' | 'production_error' | 'name_error';
export type ReplacementStatus = 'requested' | 'processing' | 'completed' | 'failed';
/** How far the executor got: `prepared` (card frozen, balance returned, fees reserved), `issued` (the new card exists at the issuer). */
export type ReplacementStep = 'none' | 'prepared' | 'issued';

export interface CardReplacementsTable {
  seq: Generated<string>;
  /** `crp_<uuid>` */
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  card_id: string;
  reason: ReplacementReason;
  security: boolean;
  note: string | null;
  status: ReplacementStatus;
  status_version: number;
  step: ColumnType<ReplacementStep, ReplacementStep | undefined, ReplacementStep>;
  /** The asset the fees were reserved and charged in (a source asset of the product), minor units of it. */
  fee_asset: string | null;
  replacement_fee: MinorDefault;
  postage_fee: MinorDefault;
  /** What went back from the card to the member's available balance (card-currency minor units). */
  returned_amount: MinorDefault;
  inventory_before: InventoryStatus | null;
  new_card_ref: string | null;
  new_card_last4: string | null;
  new_card_exp_month: number | null;
  new_card_exp_year: number | null;
  new_card_id: string | null;
  /** What the issuer last answered when it answered nothing usable (retried with the same request id). */
  upstream_outcome: ColumnType<'none' | 'timeout' | 'unknown', 'none' | 'timeout' | 'unknown' | undefined, 'none' | 'timeout' | 'unknown'>;
  attempts: Generated<number>;
  failure_reason: string | null;
  /** When the executor takes it next, on the merchant's clock. */
  next_run_at: Timestamp;
  /** A running executor's lease, on real time. */
  lease_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: NullableTimestamp;
}

export type CardReplacementRow = Selectable<CardReplacementsTable>;

export interface CardLifecycleTables {
  card_replacements: CardReplacementsTable;
}
