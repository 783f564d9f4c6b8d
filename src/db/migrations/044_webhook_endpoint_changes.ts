import { sql, type Kysely } from 'kysely';

/**
 * What a webhook endpoint was before each change of its subscription (docs/webhooks.md,
 * "Fan-out"): the reference decides a delivery by the endpoints that match at the event's time,
 * and the fan-out runs after the event has committed (every 250 ms, or later when it has a
 * backlog). One row per creation, change of `status` or `event_types`, and deletion, at the
 * merchant's time (`valid_from`, the database's clock plus a sandbox offset, as events'
 * `created_at`), with the endpoint's state before it (`prev_status` null: it did not exist).
 * An event older than an endpoint's earliest change after it saw that change's previous state;
 * an event with no change after it saw the endpoint as it is now. Endpoints created before this
 * migration have no row: they are judged as they are now, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoint_changes (
      seq bigserial PRIMARY KEY,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      valid_from timestamptz NOT NULL,
      prev_status text CHECK (prev_status IN ('enabled', 'disabled', 'deleted')),
      prev_event_types jsonb
    )
  `.execute(db);
  await sql`CREATE INDEX webhook_endpoint_changes_endpoint
    ON webhook_endpoint_changes (endpoint_id, valid_from)`.execute(db);
}
