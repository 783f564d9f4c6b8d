-- mwa_events_queue_fan_out
--
-- Queues every event a statement writes for the webhook fan-out (`webhook_fan_out_queue`, one row
-- an event: its `seq` and the fields the fan-out reads, so that it reads no event row). The fan-out
-- takes its events from that queue and deletes them as it makes their delivery records
-- (src/modules/webhooks/fan-out.ts), so an event row is never updated. One call a statement, over
-- the statement's transition table.
--
-- Trigger (created by migration 053): events_queue_fan_out (AFTER INSERT ON events, REFERENCING NEW
-- TABLE AS inserted, FOR EACH STATEMENT).
-- History: migration 053 (before it, `events.webhook_dispatched_at` marked a fanned-out event).
CREATE OR REPLACE FUNCTION public.mwa_events_queue_fan_out()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
   BEGIN
     INSERT INTO webhook_fan_out_queue (event_seq, event_id, merchant_id, environment, type, created_at)
     SELECT seq, id, merchant_id, environment, type, created_at FROM inserted;
     RETURN NULL;
   END $function$
