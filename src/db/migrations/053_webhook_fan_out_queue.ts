import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * The webhook fan-out's queue (docs/webhooks.md "Fan-out"): an event waiting to be fanned out is a
 * row of `webhook_fan_out_queue` (its `seq` and what the fan-out reads of it, so that it reads no
 * event row), made by a statement-level trigger on `events`
 * (`mwa_events_queue_fan_out`, from the statement's transition table) and deleted by the fan-out
 * that makes its delivery records, in the same transaction.
 *
 * It replaces `events.webhook_dispatched_at` and its partial index: marking an event dispatched
 * was an UPDATE of the widest, most indexed table (ten indexes), and because the column is in the
 * partial index's predicate no such update could be HOT, so every event was written twice in
 * every index (~55 µs of PostgreSQL's time an event, a tenth of a deposit's) and left a dead row
 * behind for vacuum. Events are now written once and never updated. The column stays, no longer
 * written, for processes of the previous release during a rolling deploy (they find every new
 * event undispatched and fan it out again; the records' unique indexes keep that a no-op); a
 * later migration drops it. Events it left undispatched are queued here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyStoredFunction(db, 'mwa_events_queue_fan_out.sql');
  await sql`CREATE TABLE webhook_fan_out_queue (
    event_seq bigint PRIMARY KEY,
    event_id text NOT NULL,
    merchant_id text NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    created_at timestamptz NOT NULL
  )`.execute(db);
  await sql`CREATE TRIGGER events_queue_fan_out AFTER INSERT ON events REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION mwa_events_queue_fan_out()`.execute(db);
  await sql`INSERT INTO webhook_fan_out_queue (event_seq, event_id, merchant_id, environment, type, created_at)
    SELECT seq, id, merchant_id, environment, type, created_at FROM events WHERE webhook_dispatched_at IS NULL
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`DROP INDEX events_webhook_undispatched`.execute(db);
}
