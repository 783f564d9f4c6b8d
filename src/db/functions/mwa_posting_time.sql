-- mwa_posting_time
--
-- Each posting carries its entry's `created_at`, filled from the entry (inserted just before in
-- the same statement or transaction), so that `postings_account_time (account_id, created_at)
-- INCLUDE (amount)` lets an account's balance at an instant be summed from the index alone.
--
-- Trigger (created by migration 045): postings_time (BEFORE INSERT ON postings, FOR EACH ROW).
-- History: migration 045 (issue 41, docs/ledger.md "As of").
CREATE OR REPLACE FUNCTION public.mwa_posting_time()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      NEW.created_at := (SELECT e.created_at FROM journal_entries e WHERE e.id = NEW.entry_id);
      RETURN NEW;
    END
    $function$
