/** Card transactions (migrations 021, 029): the card network's messages about a card. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { NullableTimestamp, Timestamp, MemberOwnedColumns } from '../../../db/columns.js';
import type { MinorColumn, MinorDefault } from '../shared/tables.js';

export type CardTransactionType = 'authorization' | 'clearing' | 'reversal' | 'refund';
export type CardTransactionStatus = 'approved' | 'declined' | 'cleared' | 'reversed' | 'posted';
export type CardReversalReason = 'network' | 'expired';

export interface CardTransactionsTable extends MemberOwnedColumns {
  seq: Generated<string>;
  /** `ctx_<uuid>` */
  id: string;
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
  /** Authorisations (migration 029): what partial reversals and the expiry released of the hold; held = amount −
   * reversed_amount while `approved`. */
  reversed_amount: MinorDefault;
  /** Approved authorisations: when the hold is released if neither cleared nor reversed (merchant clock;
   * `authorizationHoldDays`). */
  expires_at: NullableTimestamp;
  /** Reversals (and an authorisation fully released): `network` (the network's message) or `expired` (the hold expired,
   * ours). */
  reversal_reason: ColumnType<
    CardReversalReason | null,
    CardReversalReason | null | undefined,
    CardReversalReason | null
  >;
  /** The card network's reference of the message (`expiry:<authorisation>` for a release by expiry). */
  network_ref: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type CardTransactionRow = Selectable<CardTransactionsTable>;

export interface TransactionTables {
  card_transactions: CardTransactionsTable;
}
