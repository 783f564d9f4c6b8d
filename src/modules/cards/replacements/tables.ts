/** Card replacement requests and the executor's progress (migration 022). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp, MemberOwnedColumns } from '../../../db/columns.js';
import type { MinorDefault } from '../shared/tables.js';
import type { InventoryStatus } from '../cards/tables.js';

export type ReplacementReason =
  | 'pan_leaked'
  | 'stolen'
  | 'pin_locked'
  | 'damaged'
  | 'user_request'
  | 'expiring'
  | 'lost_in_transit'
  | 'not_received'
  | 'production_error'
  | 'name_error';
export type ReplacementStatus = 'requested' | 'processing' | 'completed' | 'failed';
/** How far the executor got: `prepared` (card frozen, balance returned, fees reserved), `issued` (the new card exists
 * at the issuer). */
export type ReplacementStep = 'none' | 'prepared' | 'issued';

export interface CardReplacementsTable extends MemberOwnedColumns {
  seq: Generated<string>;
  /** `crp_<uuid>` */
  id: string;
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
  upstream_outcome: ColumnType<
    'none' | 'timeout' | 'unknown',
    'none' | 'timeout' | 'unknown' | undefined,
    'none' | 'timeout' | 'unknown'
  >;
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

export interface ReplacementTables {
  card_replacements: CardReplacementsTable;
}
