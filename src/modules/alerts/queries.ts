import { sql, type Selectable, type Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { newId } from '../../platform/ids.js';
import { type ListEnvelope, type PageParams } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import type { OperatorAlertsTable } from './tables.js';

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

/**
 * Raises the alert unless one of the same kind about the same object is still open: one alert per
 * object while the operator has not resolved it (e.g. `upstream.unknown_status`, which the same
 * answer repeated by every retry or status query would otherwise raise again). The check and the
 * insert are serialised per (kind, object) by a transaction-scoped advisory lock, in the caller's
 * transaction when there is one. Answers the new alert's id, or undefined when one was open.
 */
export async function raiseAlertOnce(
  db: Db,
  alert: AlertInput & { object: string; objectId: string },
): Promise<string | undefined> {
  const run = async (trx: Transaction<Database>) => {
    const lockName = `operator_alerts|${alert.kind}|${alert.object}|${alert.objectId}`;
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockName},
      0))`.execute(trx);
    const open = await trx
      .selectFrom('operator_alerts')
      .select('id')
      .where('kind', '=', alert.kind)
      .where('object', '=', alert.object)
      .where('object_id', '=', alert.objectId)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    return open ? undefined : raiseAlert(trx, alert);
  };
  return db.isTransaction ? run(db as Transaction<Database>) : db.transaction().execute(run);
}

export interface AlertFilters {
  state: 'open' | 'resolved' | 'all';
  kind?: string;
  merchantId?: string;
}

/** One page of alerts, newest first (the one keyset walk). */
export async function alertPage(
  db: Db,
  f: AlertFilters,
  page: PageParams,
): Promise<ListEnvelope<Selectable<OperatorAlertsTable>>> {
  let q = db.selectFrom('operator_alerts').selectAll();
  if (f.state === 'open') q = q.where('resolved_at', 'is', null);
  if (f.state === 'resolved') q = q.where('resolved_at', 'is not', null);
  if (f.kind) q = q.where('kind', '=', f.kind);
  if (f.merchantId) q = q.where('merchant_id', '=', f.merchantId);
  return keysetPage(q, page);
}

/** Marks an alert resolved; undefined when there is no such alert. */
export async function resolveAlert(db: Db, id: string, now: Date) {
  return db
    .updateTable('operator_alerts')
    .set({ resolved_at: now })
    .where('id', '=', id)
    .returning(['id', 'resolved_at'])
    .executeTakeFirst();
}
