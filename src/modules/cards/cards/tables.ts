/** The card record (migrations 018, 019, 022). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp, MemberOwnedColumns } from '../../../db/columns.js';
import type { MinorDefault, FormFactor, Address } from '../shared/tables.js';

export type CardStatus = 'unactivated' | 'active' | 'closing' | 'closed' | 'expired' | 'replaced';

export type LimitsSync = 'synced' | 'pending' | 'failed';

export type InventoryStatus = 'in_production' | 'shipped' | 'binding' | 'bound' | 'voided';

export interface CardsTable extends MemberOwnedColumns {
  seq: Generated<string>;
  /** `crd_<uuid>` */
  id: string;
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
  /** Migration 022 (replacements/, closing/): set when a security replacement froze the card; a frozen card never
   * spends. */
  frozen_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The card this one replaces, and the one that replaced it. */
  replaces: ColumnType<string | null, string | null | undefined, string | null>;
  replaced_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** While `closing`: the status it was closed from (a refusal by the issuer goes back to it). */
  closing_from: ColumnType<
    'unactivated' | 'active' | null,
    'unactivated' | 'active' | null | undefined,
    'unactivated' | 'active' | null
  >;
  /** While `closing`: what the issuer last answered to the cancellation (`timeout`/`unknown`: reconciled). */
  close_outcome: ColumnType<
    'pending' | 'timeout' | 'unknown' | null,
    'pending' | 'timeout' | 'unknown' | null | undefined,
    'pending' | 'timeout' | 'unknown' | null
  >;
  close_checks: Generated<number>;
  close_next_check_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When the card's spendable balance went back to the member's available balance (once). */
  balance_returned_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type CardRow = Selectable<CardsTable>;

export interface CardRecordTables {
  cards: CardsTable;
}
