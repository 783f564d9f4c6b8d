import type { Generated, Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { newId } from '../platform/ids.js';

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

export interface AlertInput {
  /** e.g. `upstream.unknown_status`, `webhook.endpoint_disabled`. */
  kind: string;
  merchantId?: string;
  environment?: Environment;
  object?: string;
  objectId?: string;
  message: string;
}

/** Raises an alert for the operator, in the caller's transaction when there is one. */
export async function raiseAlert(db: Kysely<Database> | Transaction<Database>, alert: AlertInput): Promise<string> {
  const id = newId('alr');
  await db
    .insertInto('operator_alerts')
    .values({
      id,
      kind: alert.kind,
      merchant_id: alert.merchantId ?? null,
      environment: alert.environment ?? null,
      object: alert.object ?? '',
      object_id: alert.objectId ?? '',
      message: alert.message,
      resolved_at: null,
    })
    .execute();
  return id;
}
