import { sql } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import { eventBody } from '../../events/index.js';
import { eventTypes, isEventType } from '../../events/index.js';
import { withPrefix } from '../../platform/ids.js';
import { constantList, keysetPage, type ListEnvelope } from '../../platform/pagination.js';
import type { MerchantScope } from '../../platform/caller.js';

/** The columns the event object is rendered from (`eventBody`), with the keys the list and the stream walk by. */
export const eventColumns = [
  'seq',
  'id',
  'type',
  'created_at',
  'merchant_id',
  'livemode',
  'object',
  'object_id',
  'external_member_id',
  'status',
  'status_version',
] as const;

export type EventObject = ReturnType<typeof eventBody>;

/**
 * The types a `type` filter names: an exact type of the catalogue, or a prefix ending in `.*`
 * (`card.*`, `card.transaction.*`) read against the catalogue; `*`, empty or absent: every type
 * (undefined). An unknown type or a prefix no type has: none (`[]`, an empty page). Read against
 * the catalogue so that the filter is an indexed `type = ANY(...)`, never a LIKE.
 */
export function typesOfFilter(filter: string | undefined): string[] | undefined {
  if (filter === undefined || filter === '' || filter === '*') return undefined;
  if (filter.endsWith('.*')) {
    const prefix = filter.slice(0, -1);
    return eventTypes.filter((t) => t.startsWith(prefix));
  }
  return isEventType(filter) ? [filter] : [];
}

export interface EventFilters {
  type?: string;
  object_id?: string;
  created_gte?: string;
  created_lt?: string;
  delivery_success?: boolean;
  limit?: number;
  cursor?: string;
}

/**
 * The scope's events, newest first (the order they were written: `seq`), through the platform's
 * keyset page. `delivery_success`: true, the event has delivery records and every one is `sent`;
 * false, at least one is `failed`, `dead` or `no_subscriber`. An event with no record yet (the
 * fan-out has not reached it, within a second of its writing) or whose records are only `sent`
 * and `pending` matches neither (docs/events.md).
 */
export async function listEvents(db: Db, scope: MerchantScope, f: EventFilters): Promise<ListEnvelope<EventObject>> {
  const types = typesOfFilter(f.type);
  if (types !== undefined && types.length === 0) return constantList([]);
  let q = db
    .selectFrom('events as e')
    .select(eventColumns.map((c) => `e.${c}` as const))
    .where('e.merchant_id', '=', scope.merchantId)
    .where('e.environment', '=', scope.environment);
  if (types !== undefined) q = q.where('e.type', '=', sql<string>`ANY(${sql.val(types)}::text[])`);
  if (f.object_id !== undefined && f.object_id !== '') q = q.where('e.object_id', '=', f.object_id);
  if (f.created_gte !== undefined) q = q.where('e.created_at', '>=', new Date(f.created_gte));
  if (f.created_lt !== undefined) q = q.where('e.created_at', '<', new Date(f.created_lt));
  if (f.delivery_success === true) {
    q = q
      .where(sql<boolean>`EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`)
      .where(
        sql<boolean>`NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status <> 'sent')`,
      );
  } else if (f.delivery_success === false) {
    q = q.where(
      sql<boolean>`EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('failed',
        'dead', 'no_subscriber'))`,
    );
  }
  return keysetPage(q, f, eventBody);
}

/** One event of the scope (`evt_` prefix optional), or undefined. */
export async function findEvent(db: Db, scope: MerchantScope, id: string): Promise<EventObject | undefined> {
  const row = await db
    .selectFrom('events')
    .select([...eventColumns])
    .where('id', '=', withPrefix('evt', id))
    .where('merchant_id', '=', scope.merchantId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
  return row && eventBody(row);
}
