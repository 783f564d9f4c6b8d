import type { Kysely, Transaction } from 'kysely';
import type { Database, Environment } from '../db/schema.js';
import { newId } from '../platform/ids.js';
import type { EventType } from './catalogue.js';
import { insertEvent, insertEvents } from './queries.js';

export interface EventInput {
  merchantId: string;
  environment: Environment;
  /** e.g. `withdrawal.settled`: one of the catalogue (event-types.ts). */
  type: EventType;
  /** e.g. `withdrawal`. */
  object: string;
  objectId: string;
  /** The member's external id; '' (or null) when the object belongs to no member. */
  externalMemberId: string | null;
  status: string;
  statusVersion: number;
}

/** An event's row without its time, checked (a programmer error throws); `id` is `evt_<uuid>`. */
export function eventRow(event: EventInput) {
  if (!Number.isInteger(event.statusVersion) || event.statusVersion < 0) {
    throw new Error(`events: statusVersion must be a non-negative integer, got ${String(event.statusVersion)}`);
  }
  for (const field of ['merchantId', 'type', 'object', 'objectId', 'status'] as const) {
    if (typeof event[field] !== 'string' || event[field] === '')
      throw new Error(`events: ${field} must be a non-empty string`);
  }
  return {
    id: newId('evt'),
    merchant_id: event.merchantId,
    environment: event.environment,
    type: event.type,
    object: event.object,
    object_id: event.objectId,
    external_member_id: event.externalMemberId ?? '',
    status: event.status,
    status_version: event.statusVersion,
    livemode: event.environment === 'production',
  };
}

/**
 * Writes one event to the outbox, in the caller's transaction, so the event exists exactly when
 * the state change it reports does. Delivery reads the outbox later. Returns `evt_<uuid>`.
 */
export async function recordEvent(trx: Transaction<Database> | Kysely<Database>, event: EventInput): Promise<string> {
  const row = eventRow(event);
  await insertEvent(trx, row);
  return row.id;
}

/** `recordEvent` of many events in one statement. */
export async function recordEvents(trx: Transaction<Database>, events: readonly EventInput[]): Promise<void> {
  await insertEvents(trx, events.map(eventRow));
}

/** What an object's event reads of the object's row (every area's rows have these columns). */
export interface EventSubject {
  id: string;
  merchant_id: string;
  environment: Environment;
  status_version: number;
}

/**
 * The envelope's fields an event takes from its object's row (its merchant, environment, id and
 * status version). For `recordEvent`'s input: `{ ...rowEnvelope(row), type, object, status, externalMemberId }`.
 */
export const rowEnvelope = (row: EventSubject) => ({
  merchantId: row.merchant_id,
  environment: row.environment,
  objectId: row.id,
  statusVersion: row.status_version,
});

/** An event as its row holds it (the outbox), what `eventBody` renders. */
export interface StoredEvent {
  id: string;
  type: string;
  created_at: Date | string;
  merchant_id: string;
  livemode: boolean;
  object: string;
  object_id: string;
  external_member_id: string;
  status: string;
  status_version: number | string;
}

/**
 * The event object: the reference's webhook body (ids and status only). The one rendering, used
 * by webhook delivery (the signed bytes), the events API and the event stream, so that an event
 * read or streamed is exactly the body its webhook carried.
 */
export function eventBody(ev: StoredEvent) {
  return {
    event_id: ev.id,
    event_type: ev.type,
    created_at: new Date(ev.created_at).toISOString(),
    merchant_id: ev.merchant_id,
    livemode: ev.livemode,
    data: {
      object: ev.object,
      id: ev.object_id,
      external_member_id: ev.external_member_id,
      status: ev.status,
      status_version: Number(ev.status_version),
    },
  };
}
