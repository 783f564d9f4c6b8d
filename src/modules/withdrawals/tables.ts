import type { Generated } from 'kysely';
import type { Minor, MemberOwnedColumns } from '../../db/columns.js';

export type WithdrawalStatus = 'locked' | 'settled' | 'failed';

export interface WithdrawalsTable extends MemberOwnedColumns {
  seq: Generated<bigint>;
  id: string;
  asset: string;
  network: string;
  address: string;
  amount: Minor;
  fee: Minor;
  status: WithdrawalStatus;
  status_version: number;
  created_at: Generated<Date>;
  updated_at: Date | string;
}

/** Addresses a withdrawal may not be sent to (kept by the operator). */
export interface BlacklistedAddressesTable {
  network: string;
  address: string;
  reason: Generated<string>;
  created_at: Generated<Date>;
}

export interface WithdrawalTables {
  withdrawals: WithdrawalsTable;
  blacklisted_addresses: BlacklistedAddressesTable;
}
