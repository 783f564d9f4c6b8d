/** The card products (migration 018) with their top-up pricing (migration 021) and the BIN authorisations. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Json, Timestamp, ScopedColumns } from '../../../db/columns.js';
import type { MinorColumn, MinorDefault, FormFactor } from '../shared/tables.js';

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

export interface CardBinAuthorizationsTable extends ScopedColumns {
  bin: string;
  created_at: Generated<Date>;
}

export type CardProductRow = Selectable<CardProductsTable>;

/** Top-up pricing of a product (migration 021). */
export interface CardProductsTable {
  /** Fee on a top-up, basis points of the amount (rounded up), in the source asset. */
  topup_fee_bps: ColumnType<number, number | undefined, number>;
  /** Fixed part of the top-up fee, minor units of the card currency (taken 1:1 into the source asset, rounded up). */
  topup_fee_fixed: MinorDefault;
  /** The FX markup over mid on a cross-currency top-up: never disclosed (the quote estimates 1:1). */
  topup_fx_markup_bps: ColumnType<number, number | undefined, number>;
}

export interface ProductTables {
  card_products: CardProductsTable;
  card_bin_authorizations: CardBinAuthorizationsTable;
}
