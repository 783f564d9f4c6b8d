/** Card top-up orders (migration 021); the products' top-up pricing is in the products' table (../products/tables.ts).
 * */
import type { Generated, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp, MemberOwnedColumns, ProviderOrderColumns } from '../../../db/columns.js';
import type { MinorColumn } from '../shared/tables.js';

export type TopUpStatus = 'pending' | 'processing' | 'suspended' | 'credited' | 'failed';
export type TopUpUpstreamOutcome = 'none' | 'pending' | 'accepted' | 'timeout' | 'unknown';

export interface CardTopupsTable extends MemberOwnedColumns, ProviderOrderColumns<TopUpStatus, TopUpUpstreamOutcome> {
  seq: Generated<string>;
  /** `ctu_<uuid>` */
  id: string;
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
  dispatch_started_at: NullableTimestamp;
  credited_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type CardTopupRow = Selectable<CardTopupsTable>;

export interface TopUpTables {
  card_topups: CardTopupsTable;
}
