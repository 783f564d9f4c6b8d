import type { Generated } from 'kysely';
import type { ScopedColumns } from '../../db/columns.js';

export interface DepositAddressesTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  asset: string;
  network: string;
  address: string;
  created_at: Generated<Date>;
}

export interface DepositAddressTables {
  deposit_addresses: DepositAddressesTable;
}
