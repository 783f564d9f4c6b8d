import type { Generated } from 'kysely';
import type { Environment } from '../../db/columns.js';

export interface OperatorAlertsTable {
  seq: Generated<bigint>;
  id: string;
  kind: string;
  merchant_id: string | null;
  environment: Environment | null;
  object: Generated<string>;
  object_id: Generated<string>;
  message: string;
  resolved_at: Date | null;
  created_at: Generated<Date>;
}

export interface AlertTables {
  operator_alerts: OperatorAlertsTable;
}
