import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Webhook endpoints, delivery records and their attempt log (docs/webhooks.md). The events
 * outbox (002) gains `webhook_dispatched_at`: the fan-out ticker claims undispatched events with
 * FOR UPDATE SKIP LOCKED and marks them in the transaction that creates their delivery records,
 * so each event is fanned out exactly once whatever the number of processes, and an event whose
 * writer commits late (a lower seq after a higher one) is never skipped, as a seq cursor could.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE webhook_endpoints (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      url text NOT NULL,
      event_types jsonb NOT NULL,
      -- whsec_<base64>; kept to sign, never logged, shown only at creation and roll. '' once deleted.
      secret text NOT NULL,
      -- During a roll the old secret keeps signing beside the new one until it expires.
      previous_secret text,
      previous_secret_expires_at timestamptz,
      status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled', 'deleted')),
      disabled_reason text NOT NULL DEFAULT '',
      -- Start of the current run of failed attempts; NULL after any success.
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, environment, status);

    CREATE TABLE webhook_deliveries (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      event_id text NOT NULL REFERENCES events(id),
      event_type text NOT NULL,
      -- NULL only while the record is no_subscriber.
      endpoint_id text,
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'dead', 'no_subscriber')),
      -- Every attempt ever made (shown); round_attempts counts the current schedule round.
      attempts integer NOT NULL DEFAULT 0,
      round_attempts integer NOT NULL DEFAULT 0,
      last_http_status integer NOT NULL DEFAULT 0,
      last_error text NOT NULL DEFAULT '',
      next_attempt_at timestamptz,
      -- Bumped by each redelivery: a job of an older generation does nothing.
      generation integer NOT NULL DEFAULT 0,
      -- An attempt in flight holds the record until then; no other job posts meanwhile.
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((endpoint_id IS NULL) = (status = 'no_subscriber'))
    );
    CREATE UNIQUE INDEX webhook_deliveries_event_endpoint ON webhook_deliveries (event_id, endpoint_id)
      WHERE endpoint_id IS NOT NULL;
    CREATE UNIQUE INDEX webhook_deliveries_event_unsubscribed ON webhook_deliveries (event_id)
      WHERE endpoint_id IS NULL;
    CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries (merchant_id, environment, seq);
    CREATE INDEX webhook_deliveries_merchant_status ON webhook_deliveries (merchant_id, environment, status, seq);
    CREATE INDEX webhook_deliveries_overdue ON webhook_deliveries (next_attempt_at)
      WHERE status IN ('pending', 'failed');

    -- One row per attempt started: what was sent when, and what came back.
    CREATE TABLE webhook_delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      generation integer NOT NULL,
      attempt integer NOT NULL,
      -- refused: the address check failed at delivery time and no request was sent. abandoned: the
      -- attempt's process died (or stalled) before recording; a later attempt took the record over.
      outcome text NOT NULL DEFAULT 'in_flight' CHECK (outcome IN ('in_flight', 'sent', 'failed', 'refused',
        'abandoned')),
      http_status integer NOT NULL DEFAULT 0,
      error text NOT NULL DEFAULT '',
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      UNIQUE (delivery_id, attempt)
    );

    ALTER TABLE events ADD COLUMN webhook_dispatched_at timestamptz;
    -- Events written before webhooks existed had no endpoint to go to.
    UPDATE events SET webhook_dispatched_at = created_at;
    CREATE INDEX events_webhook_undispatched ON events (seq) WHERE webhook_dispatched_at IS NULL;
  `,
  );
}
