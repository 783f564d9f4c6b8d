import type { Generated } from 'kysely';
import type { Environment } from '../../db/columns.js';

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

export interface DepositAddressTables {
  deposit_addresses: DepositAddressesTable;
}
