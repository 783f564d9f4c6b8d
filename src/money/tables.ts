import type { ColumnType, Generated } from 'kysely';
import type { Environment, Timestamp } from '../db/columns.js';

/**
 * numeric(78,0) minor units: both drivers return numeric as a string; it is written as a string
 * too, so an amount never passes through a JavaScript number.
 */
type Minor = ColumnType<string, string, string>;
type MinorWithDefault = ColumnType<string, string | undefined, string>;

export type AssetType = 'crypto' | 'fiat';
export type OwnerType = 'member' | 'merchant' | 'platform';
export type Side = 'debit' | 'credit';

export interface AssetsTable {
  code: string;
  scale: number;
  type: AssetType;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface AssetNetworksTable {
  asset: string;
  network: string;
  enabled: Generated<boolean>;
  withdrawal_fee: MinorWithDefault;
  withdrawal_min: MinorWithDefault;
  /** A regular expression a withdrawal address on this network must match. */
  address_pattern: string;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface LedgerAccountsTable {
  id: Generated<bigint>;
  environment: Environment;
  owner_type: OwnerType;
  /**
   * The member or merchant id; for a platform account the merchant it is kept for (migration 026),
   * or '' for a platform account shared by every merchant, stored before 026.
   */
  owner_id: string;
  asset: string;
  bucket: string;
  normal_side: Side;
  /** Signed by the normal side: a positive balance is what the account normally holds. */
  balance: MinorWithDefault;
  non_negative: boolean;
  created_at: Generated<Date>;
}

export interface JournalEntriesTable {
  id: string;
  seq: Generated<bigint>;
  environment: Environment;
  kind: string;
  reference_type: string;
  reference_id: string;
  merchant_id: string | null;
  asset: string;
  created_at: Generated<Date>;
}

export interface PostingsTable {
  id: Generated<bigint>;
  entry_id: string;
  account_id: bigint;
  asset: string;
  /** Debit positive, credit negative, never zero. */
  amount: Minor;
  /** The entry's `created_at`, copied by a trigger (migration 045) for the as-of index. */
  created_at: Generated<Date>;
}

export interface EventsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  type: string;
  object: string;
  object_id: string;
  external_member_id: string;
  status: string;
  status_version: number;
  livemode: boolean;
  created_at: Generated<Date>;
}

/** Tables of the ledger (assets catalogue, accounts, journal, postings, events outbox). */
export interface LedgerTables {
  assets: AssetsTable;
  asset_networks: AssetNetworksTable;
  ledger_accounts: LedgerAccountsTable;
  journal_entries: JournalEntriesTable;
  postings: PostingsTable;
  events: EventsTable;
}
