import type { Generated } from 'kysely';
import type { Minor, ScopedColumns } from '../../db/columns.js';

/** An operator's credit of a merchant's prepaid balance (the reference row of its journal entry). */
export interface PrepaidCreditsTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  asset: string;
  amount: Minor;
  created_at: Generated<Date>;
}

/** An operator's custody adjustment, with its reason (the reference row of its journal entry). */
export interface CustodyAdjustmentsTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  asset: string;
  amount: Minor;
  direction: 'increase' | 'decrease';
  reason: string;
  created_at: Generated<Date>;
}

/** A merchant's watch on its prepaid or custody balance of one asset (migration 047; the ledger's trigger keeps
 * `state`). */
export interface BalanceMonitorsTable extends ScopedColumns {
  id: string;
  seq: Generated<bigint>;
  balance: 'prepaid' | 'custody';
  asset: string;
  /** Minor units, > 0. */
  below: Minor;
  state: 'ok' | 'triggered';
  /** Changes of state so far: the `status_version` of its events. */
  changes: Generated<number>;
  created_at: Date;
}

export interface BalanceTables {
  balance_monitors: BalanceMonitorsTable;
  prepaid_credits: PrepaidCreditsTable;
  custody_adjustments: CustodyAdjustmentsTable;
}
