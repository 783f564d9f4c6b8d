import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * The events API (extensions 11, docs/events.md): events kept and read, streamed, replayed.
 *
 * - `events.writer_xid`: the id of the transaction that wrote the event (`pg_current_xact_id()`,
 *   as bigint). The stream's order is (`writer_xid`, `seq`) and it only reads events whose
 *   writer is older than every transaction still running (`pg_snapshot_xmin`): no transaction can
 *   still commit an event before that point, so a stream that has passed an event never misses
 *   one committed later in front of it, whatever the commit order of concurrent writers (`seq`
 *   alone is taken at insert, not at commit). Rows written before this migration read 0: older
 *   than any new one. A constant default first (no table rewrite), then the real one.
 * - A statement-level trigger notifies `mwa_events` (empty payload, so one notification per
 *   transaction at most) when events are written: a process holding streams reads at once
 *   instead of at its next poll.
 * - Indexes for the list's filters (newest first by `seq`), the stream's resume,
 *   the `delivery_success` filter and the retention's scan.
 * - `event_streams`: the open streams of each key, with a lease renewed while open, so the
 *   per-key bound holds across processes and a process that died frees its slots.
 *
 * The trigger's function lives in src/db/functions/ (docs/stored-functions.md), its only source.
 */
const statements = [
  'ALTER TABLE events ADD COLUMN writer_xid bigint NOT NULL DEFAULT 0',
  'ALTER TABLE events ALTER COLUMN writer_xid SET DEFAULT (pg_current_xact_id()::text::bigint)',
  'CREATE INDEX events_merchant_created ON events (merchant_id, environment, created_at)',
  'CREATE INDEX events_merchant_object ON events (merchant_id, environment, object_id, seq)',
  'CREATE INDEX events_merchant_type ON events (merchant_id, environment, type, seq)',
  'CREATE INDEX events_merchant_stream ON events (merchant_id, environment, writer_xid, seq)',
  'CREATE INDEX events_stream ON events (writer_xid, seq)',
  'CREATE INDEX events_created ON events (created_at)',
  'CREATE INDEX webhook_deliveries_event_status ON webhook_deliveries (event_id, status)',
  'CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION mwa_events_notify()',
  `CREATE TABLE event_streams (
     id text PRIMARY KEY,
     key_id text NOT NULL,
     merchant_id text NOT NULL,
     environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
     opened_at timestamptz NOT NULL DEFAULT now(),
     lease_until timestamptz NOT NULL
   )`,
  'CREATE INDEX event_streams_key ON event_streams (key_id, lease_until)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await applyStoredFunction(db, 'mwa_events_notify.sql');
  for (const statement of statements) await sql.raw(statement).execute(db);
}
