-- mwa_post_entry
--
-- Posts one balanced entry (src/ledger/ledger.ts, `postEntry`): every posting for a merchant first
-- takes the merchant's write lock (a transaction-scoped advisory lock on
-- `merchant-writes|<merchant>|<environment>`), before any of its account rows. Group commit
-- (docs/group-commit.md) writes many of a merchant's movements in one transaction, locking their
-- accounts one after the other; a transaction of the same merchant that locked a member's account
-- and then waited for the merchant's custody would otherwise wait in a cycle with it. With the lock
-- first, the merchant's money writes take turns from their first posting to their commit, which is
-- how long the custody row held them anyway. Entries without a merchant take no lock.
--
-- The posting itself is `mwa_post_entry_rows` (its arguments and answers), called after the lock.
-- History: migration 024 created `mwa_post_entry`; 031 renamed it `mwa_post_entry_rows` and
-- created this one.
CREATE OR REPLACE FUNCTION public.mwa_post_entry(p_entry_id text, p_environment text, p_kind text,
    p_reference_type text, p_reference_id text, p_merchant_id text, p_asset text, p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[], p_delta numeric[],
    p_line_account integer[], p_line_amount numeric[])
 RETURNS TABLE(status text, account_index integer)
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF p_merchant_id IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('merchant-writes|' || p_merchant_id || '|' || p_environment, 0));
  END IF;
  RETURN QUERY SELECT * FROM mwa_post_entry_rows(p_entry_id, p_environment, p_kind, p_reference_type, p_reference_id,
    p_merchant_id, p_asset, p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative, p_delta, p_line_account,
      p_line_amount);
END
$function$
