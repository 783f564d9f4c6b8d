-- mwa_lock_accounts
--
-- The accounts of a one-entry posting (`mwa_post_entry_rows`): `mwa_lock_accounts_across` with
-- the one environment of the entry for every account, so both paths find, create and lock accounts
-- by the same statements. Each account is looked up by its whole key (an index probe each); the
-- missing ones are created (in the order given, the callers' key order); then each is locked by
-- its id, in ascending id order, and its rules checked against the caller's. The functions of
-- migrations 024 and 032 joined the accounts with `unnest` of their arrays: PL/pgSQL keeps a
-- generic plan of each statement, and a plan made while `ledger_accounts` was small looked up the
-- environment only and filtered every account of it, on every posting, as the table grew (seen
-- with auto_explain: `Index Cond: (environment = $1)`, the rest a join filter). A look-up by the
-- whole key, or by the id, has no such plan.
--
-- PL/pgSQL rather than SQL: the files are applied in name order, and an SQL function's body is
-- checked when it is created, before `mwa_lock_accounts_across` exists on a fresh database.
-- History: migration 034 (issue 16); its own copy of the statements until issue 38.
CREATE OR REPLACE FUNCTION public.mwa_lock_accounts(p_environment text, p_asset text[], p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[])
 RETURNS TABLE(ord integer, id bigint, balance numeric)
 LANGUAGE plpgsql
AS $function$
BEGIN
  RETURN QUERY SELECT * FROM mwa_lock_accounts_across(
    array_fill(p_environment, ARRAY[coalesce(array_length(p_owner_type, 1), 0)]),
    p_asset, p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative);
END
$function$
