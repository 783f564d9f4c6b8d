import type { Generated } from 'kysely';
import type { Environment, Minor } from '../../db/columns.js';

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

export interface DepositTables {
  deposits: DepositsTable;
}
