import type { Generated } from 'kysely';
import type { Environment, Minor } from '../../db/columns.js';

/** An operator's credit of a merchant's prepaid balance (the reference row of its journal entry). */
export interface PrepaidCreditsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  asset: string;
  amount: Minor;
  created_at: Generated<Date>;
}

/** An operator's custody adjustment, with its reason (the reference row of its journal entry). */
export interface CustodyAdjustmentsTable {
  seq: Generated<bigint>;
  id: string;
  merchant_id: string;
  environment: Environment;
  asset: string;
  amount: Minor;
  direction: 'increase' | 'decrease';
  reason: string;
  created_at: Generated<Date>;
}

export interface BalanceTables {
  prepaid_credits: PrepaidCreditsTable;
  custody_adjustments: CustodyAdjustmentsTable;
}
