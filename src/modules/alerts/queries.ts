import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Environment } from '../../db/schema.js';
import { newId } from '../../platform/ids.js';
import { keysetPage, type ListEnvelope, type PageParams } from '../../platform/pagination.js';
import type { OperatorAlertsTable } from './tables.js';

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

export interface AlertFilters {
  state: 'open' | 'resolved' | 'all';
  kind?: string;
  merchantId?: string;
}

/** One page of alerts, newest first (the one keyset walk). */
export async function alertPage(db: Db, f: AlertFilters, page: PageParams): Promise<ListEnvelope<Selectable<OperatorAlertsTable>>> {
  let q = db.selectFrom('operator_alerts').selectAll();
  if (f.state === 'open') q = q.where('resolved_at', 'is', null);
  if (f.state === 'resolved') q = q.where('resolved_at', 'is not', null);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.merchantId) q = q.where('merchant_id', '=', f.merchantId);
  return keysetPage(q, page);
}

/** Marks an alert resolved; undefined when there is no such alert. */
export async function resolveAlert(db: Db, id: string, now: Date) {
  return db.updateTable('operator_alerts').set({ resolved_at: now }).where('id', '=', id).returning(['id', 'resolved_at']).executeTakeFirst();
}
