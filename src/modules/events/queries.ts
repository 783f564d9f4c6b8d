// Over 300 lines: the events API, the stream and the retention read the same table by the same
// keys and render the same columns (eventBody); one file keeps those in step.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';
import { inScope } from '../../db/owned-by.js';
import { eventBody, eventTypes, isEventType, type StoredEvent } from '../../events/index.js';
import { withPrefix } from '../../platform/ids.js';
import { constantList, type ListEnvelope } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import type { MerchantScope } from '../../platform/caller.js';
import type { ClockScope } from '../../platform/clock.js';
import { scopeNowSql } from '../../platform/queries/clock.js';

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
    .where(inScope(scope))
    .executeTakeFirst();
  return row && eventBody(row);
}

/** The event stream's horizon (stream.ts): transactions older than this have all ended. */
const horizonSql = sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;

/** The current snapshot in its text form (`xmin:xmax:xip,...`; parsed by snapshot.ts). */
export async function readSnapshot(db: Db): Promise<string> {
  const { rows } = await sql<{ s: string }>`SELECT pg_current_snapshot()::text AS s`.execute(db);
  return rows[0]!.s;
}

export async function readHorizon(db: Db): Promise<bigint> {
  const { rows } = await sql<{ h: string }>`SELECT ${horizonSql} AS h`.execute(db);
  return BigInt(rows[0]!.h);
}

export interface FeedRow {
  merchant_id: string;
  environment: string;
  writer_xid: string;
  seq: string;
}

/** Events past a stream position (`writer_xid`, `seq`) whose writer is behind the horizon, in that order. */
export async function eventsPastPosition(
  db: Db,
  from: { xid: bigint; seq: bigint },
  limit: number,
): Promise<FeedRow[]> {
  const { rows } = await sql<FeedRow>`
        SELECT merchant_id, environment, writer_xid::text AS writer_xid, seq::text AS seq FROM events
        WHERE (writer_xid, seq) > (${from.xid.toString()}::bigint, ${from.seq.toString()}::bigint) AND writer_xid <
          ${horizonSql}
        ORDER BY writer_xid, seq LIMIT ${limit}
      `.execute(db);
  return rows;
}

/** The stream position of one event of the scope, if it is kept. */
export async function eventPosition(db: Db, scope: MerchantScope, eventId: string) {
  return db
    .selectFrom('events')
    .select([sql<string>`writer_xid::text`.as('xid'), sql<string>`seq::text`.as('seq')])
    .where('id', '=', withPrefix('evt', eventId))
    .where(inScope(scope))
    .executeTakeFirst();
}

/** Serialises the opening of an API key's streams (the bound per key). */
export async function lockKeyStreams(trx: Transaction<Database>, keyId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`event_streams|${keyId}`}, 0))`.execute(trx);
}

export async function deleteExpiredStreams(trx: Transaction<Database>, keyId: string): Promise<void> {
  await trx
    .deleteFrom('event_streams')
    .where('key_id', '=', keyId)
    .where('lease_until', '<', sql<Date>`now()`)
    .execute();
}

export async function countKeyStreams(trx: Transaction<Database>, keyId: string): Promise<number> {
  const { count } = await trx
    .selectFrom('event_streams')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('key_id', '=', keyId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** A stream's lease row, leased `leaseMs` from the database's now. */
export async function insertStream(
  trx: Transaction<Database>,
  s: { id: string; keyId: string; scope: MerchantScope },
  leaseMs: number,
): Promise<void> {
  await trx
    .insertInto('event_streams')
    .values({
      id: s.id,
      key_id: s.keyId,
      merchant_id: s.scope.merchantId,
      environment: s.scope.environment,
      lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` as unknown as Date,
    })
    .execute();
}

export async function deleteStream(db: Db, id: string): Promise<void> {
  await db.deleteFrom('event_streams').where('id', '=', id).execute();
}

export async function renewStreamLeases(db: Db, ids: readonly string[], leaseMs: number): Promise<void> {
  await db
    .updateTable('event_streams')
    .set({ lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` as unknown as Date })
    .where('id', 'in', ids)
    .execute();
}

/** An event as the stream reads it: the stored event with its stream position. */
export interface StreamEventRow extends StoredEvent {
  writer_xid: string;
  seq: string;
  created_at: Date;
  status_version: number;
}

/** The scope's events past a stream position whose writer is behind the horizon, in stream order. */
export async function scopeEventsPastPosition(
  db: Db,
  scope: MerchantScope,
  from: { xid: bigint; seq: bigint },
  limit: number,
): Promise<StreamEventRow[]> {
  const { rows } = await sql<StreamEventRow>`
        SELECT writer_xid::text AS writer_xid, seq::text AS seq, id, type, created_at, merchant_id, livemode, object,
          object_id, external_member_id, status, status_version
        FROM events
        WHERE merchant_id = ${scope.merchantId} AND environment = ${scope.environment}
          AND (writer_xid, seq) > (${from.xid.toString()}::bigint, ${from.seq.toString()}::bigint) AND writer_xid <
            ${horizonSql}
        ORDER BY writer_xid, seq LIMIT ${limit}
      `.execute(db);
  return rows;
}

// Retention (retention.ts): prunable events and their delivery records.

/** Nothing a delivery still needs (alias `e`). */
const prunableSql = sql<boolean>`NOT EXISTS (SELECT 1 FROM webhook_fan_out_queue q WHERE q.event_seq = e.seq)
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'failed'))`;

/**
 * Deletes one batch of prunable events matching `where` (over `events e`) and their records, in
 * one statement: the events claimed (SKIP LOCKED: another process takes the next ones), their
 * records deleted, then the events (the foreign key is checked at the statement's end). A record
 * queued again meanwhile is not deleted: its event then cannot go either, and the statement
 * fails, to be tried again at the next run, when the event is no longer prunable.
 */
async function pruneBatch(db: Db, where: RawBuilder<boolean>, limit: number): Promise<number> {
  const result = await sql`
    WITH doomed AS (
      SELECT e.id FROM events e WHERE ${where} AND ${prunableSql}
      ORDER BY e.created_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), records AS (
      DELETE FROM webhook_deliveries d USING doomed WHERE d.event_id = doomed.id AND d.status NOT IN ('pending',
        'failed')
    )
    DELETE FROM events e USING doomed WHERE e.id = doomed.id
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** One batch of the scope's prunable events created before `cutoff` (to the millisecond). */
export async function pruneScopeBatch(db: Db, scope: ClockScope, cutoff: Date, limit: number): Promise<number> {
  return pruneBatch(
    db,
    sql<boolean>`e.merchant_id = ${scope.merchantId} AND e.environment = ${scope.environment}
      AND e.created_at < ${cutoff}::timestamptz + interval '1 millisecond'`,
    limit,
  );
}

/** One batch of prunable events older than real time minus `retentionMs`. */
export async function pruneOlderThan(db: Db, retentionMs: number, limit: number): Promise<number> {
  return pruneBatch(db, sql<boolean>`e.created_at <= now() - ${retentionMs} * interval '1 millisecond'`, limit);
}

/** One batch of a sandbox merchant's prunable events older than its time minus `retentionMs`. */
export async function pruneSandboxOlderThan(
  db: Db,
  merchantId: string,
  retentionMs: number,
  limit: number,
): Promise<number> {
  const where = sql<boolean>`e.merchant_id = ${merchantId} AND e.environment = 'sandbox'
          AND e.created_at <= ${scopeNowSql(merchantId, 'sandbox')} - ${retentionMs} * interval '1 millisecond'`;
  return pruneBatch(db, where, limit);
}

/** When the scope's oldest prunable event was created. */
export async function oldestPrunableEvent(db: Db, scope: ClockScope) {
  return db
    .selectFrom('events as e')
    .select((eb) => eb.fn.min('e.created_at').as('at'))
    .where('e.merchant_id', '=', scope.merchantId)
    .where('e.environment', '=', scope.environment)
    .where(prunableSql)
    .executeTakeFirst();
}

/** The sandbox merchants whose clock was advanced. */
export async function advancedSandboxMerchants(db: Db) {
  return db
    .selectFrom('sandbox_clocks')
    .select('merchant_id')
    .where('offset_ms', '>', '0' as never)
    .execute();
}
