import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { newId } from '../../platform/ids.js';

type Db = Kysely<Database> | Transaction<Database>;

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
export async function raiseAlert(db: Db, alert: AlertInput): Promise<string> {
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
