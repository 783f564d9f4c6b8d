-- mwa_entry_time
--
-- An entry's `created_at` is set when it is inserted, on the merchant's clock: the statement's
-- time (`clock_timestamp()`, taken after the posting holds the merchant's write lock, so a
-- merchant's entries are timed in the order they post) plus the merchant's sandbox offset, as
-- events' and objects' times are. Entries without a merchant (none posted since migration 026)
-- keep the column's default.
--
-- Trigger (created by migration 045): journal_entries_time (BEFORE INSERT ON journal_entries, FOR
-- EACH ROW).
-- History: migration 045 (issue 41, docs/ledger.md "As of" and "The merchant's journal").
CREATE OR REPLACE FUNCTION public.mwa_entry_time()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NEW.merchant_id IS NOT NULL THEN
        NEW.created_at := clock_timestamp() + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc
          WHERE sc.merchant_id = NEW.merchant_id AND NEW.environment = 'sandbox'), 0) * interval '1 millisecond';
      END IF;
      RETURN NEW;
    END
    $function$
