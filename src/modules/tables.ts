import type { Generated } from 'kysely';
import type { Environment } from '../db/schema.js';

/** Money columns are numeric minor units: they arrive as decimal strings and are parsed to bigint. */
type Minor = string | bigint;

export interface DepositsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
  asset: string;
  network: string | null;
  amount: Minor;
  tx_hash: string;
  status: string;
  created_at: Generated<Date>;
}

export type WithdrawalStatus = 'locked' | 'settled' | 'failed';

export interface WithdrawalsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  member_id: string;
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

export interface BlacklistedAddressesTable {
  network: string;
  address: string;
  reason: Generated<string>;
  created_at: Generated<Date>;
}

export interface DepositAddressesTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  asset: string;
  network: string;
  address: string;
  created_at: Generated<Date>;
}

export interface PrepaidCreditsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  asset: string;
  amount: Minor;
  created_at: Generated<Date>;
}

/** Tables of the business areas. */
export interface MoneyFlowTables {
  deposits: DepositsTable;
  withdrawals: WithdrawalsTable;
  blacklisted_addresses: BlacklistedAddressesTable;
  deposit_addresses: DepositAddressesTable;
  prepaid_credits: PrepaidCreditsTable;
}
