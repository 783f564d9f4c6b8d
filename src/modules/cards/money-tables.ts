/** The card money tables (migration 021): top-up orders and card transactions. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Minor, NullableTimestamp, Timestamp } from '../../db/columns.js';

type MinorColumn = ColumnType<string, Minor, Minor>;
type MinorDefault = ColumnType<string, Minor | undefined, Minor>;

export type TopUpStatus = 'pending' | 'processing' | 'suspended' | 'credited' | 'failed';
export type TopUpUpstreamOutcome = 'none' | 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface CardTopupsTable {
  seq: Generated<string>;
  /** `ctu_<uuid>` */
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  card_id: string;
  source_asset: string;
  /** Minor units of the source asset: what goes onto the card before conversion. */
  amount: MinorColumn;
  /** Minor units of the source asset, charged on top of `amount`. */
  fee: MinorColumn;
  card_currency: string;
  /** Minor units of the card currency: `amount` at `rate`, rounded down. */
  arrival_amount: MinorColumn;
  /** The real rate fixed at creation (mid less the product's markup; `1` for the same currency). */
  rate: string;
  status: TopUpStatus;
  status_version: number;
  upstream_outcome: TopUpUpstreamOutcome;
  provider_order_id: string | null;
  provider_status: string | null;
  failure_reason: string | null;
  dispatch_started_at: NullableTimestamp;
  check_count: Generated<number>;
  next_check_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  credited_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type CardTransactionType = 'authorization' | 'clearing' | 'reversal' | 'refund';
export type CardTransactionStatus = 'approved' | 'declined' | 'cleared' | 'reversed' | 'posted';

export interface CardTransactionsTable {
  seq: Generated<string>;
  /** `ctx_<uuid>` */
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  card_id: string;
  type: CardTransactionType;
  status: CardTransactionStatus;
  status_version: number;
  /** Minor units of `currency` (the card currency for every approved movement). */
  amount: MinorColumn;
  currency: string;
  merchant_name: string;
  mcc: string;
  decline_reason: string | null;
  /** Clearing, reversal, refund: the authorisation they belong to. */
  authorization_id: string | null;
  /** Authorisations: what has cleared, and what has been refunded of it. */
  cleared_amount: MinorDefault;
  refunded_amount: MinorDefault;
  /** The card network's reference of the message. */
  network_ref: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type CardTopupRow = Selectable<CardTopupsTable>;
export type CardTransactionRow = Selectable<CardTransactionsTable>;

export interface CardMoneyTables {
  card_topups: CardTopupsTable;
  card_transactions: CardTransactionsTable;
}

declare module './tables.js' {
  /** Top-up pricing of a product (migration 021). */
  interface CardProductsTable {
    /** Fee on a top-up, basis points of the amount (rounded up), in the source asset. */
    topup_fee_bps: ColumnType<number, number | undefined, number>;
    /** Fixed part of the top-up fee, minor units of the card currency (taken 1:1 into the source asset, rounded up). */
    topup_fee_fixed: MinorDefault;
    /** The FX markup over mid on a cross-currency top-up: never disclosed (the quote estimates 1:1). */
    topup_fx_markup_bps: ColumnType<number, number | undefined, number>;
  }
}
