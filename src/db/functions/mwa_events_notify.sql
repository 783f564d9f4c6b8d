-- mwa_events_notify
--
-- Notifies `mwa_events` (empty payload, so one notification per transaction at most) when events
-- are written: a process holding event streams reads at once instead of at its next poll.
--
-- Trigger (created by migration 046): events_notify (AFTER INSERT ON events, FOR EACH STATEMENT).
-- History: migration 046 (extensions 11, docs/events.md).
CREATE OR REPLACE FUNCTION public.mwa_events_notify()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
   BEGIN
     PERFORM pg_notify('mwa_events', '');
     RETURN NULL;
   END $function$
