-- mwa_lock_accounts
--
-- The accounts of a one-entry posting (`mwa_post_entry_rows`; a batch's are
-- `mwa_lock_accounts_across`): each account is looked up by its whole key, one row at a time; the
-- missing ones are created (in the order given, the callers' key order); then each is locked by
-- its id, in ascending id order, and its rules checked against the caller's. The functions of
-- migrations 024 and 032 joined the accounts with `unnest` of their arrays: PL/pgSQL keeps a
-- generic plan of each statement, and a plan made while `ledger_accounts` was small looked up the
-- environment only and filtered every account of it, on every posting, as the table grew (seen
-- with auto_explain: `Index Cond: (environment = $1)`, the rest a join filter). A look-up by the
-- whole key, or by the id, has no such plan.
--
-- History: migration 034 (issue 16).
CREATE OR REPLACE FUNCTION public.mwa_lock_accounts(p_environment text, p_asset text[], p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[])
 RETURNS TABLE(ord integer, id bigint, balance numeric)
 LANGUAGE plpgsql
AS $function$
DECLARE
  n int := coalesce(array_length(p_owner_type, 1), 0);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  found_id bigint;
  missing boolean := false;
  acc record;
  i int;
  k int;
BEGIN
  FOR i IN 1..n LOOP
    SELECT a.id INTO found_id FROM ledger_accounts a
    WHERE a.environment = p_environment AND a.owner_type = p_owner_type[i] AND a.owner_id = p_owner_id[i]
      AND a.asset = p_asset[i] AND a.bucket = p_bucket[i];
    ids[i] := found_id;
    missing := missing OR found_id IS NULL;
  END LOOP;
  IF missing THEN
    INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
    SELECT p_environment, p_owner_type[t.i], p_owner_id[t.i], p_asset[t.i], p_bucket[t.i], p_normal_side[t.i],
      p_non_negative[t.i]
    FROM generate_subscripts(p_owner_type, 1) AS t(i)
    WHERE ids[t.i] IS NULL
    ORDER BY t.i
    ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;
    FOR i IN 1..n LOOP
      IF ids[i] IS NULL THEN
        SELECT a.id INTO found_id FROM ledger_accounts a
        WHERE a.environment = p_environment AND a.owner_type = p_owner_type[i] AND a.owner_id = p_owner_id[i]
          AND a.asset = p_asset[i] AND a.bucket = p_bucket[i];
        IF found_id IS NULL THEN RAISE EXCEPTION 'ledger: account % of the entries was not created', i; END IF;
        ids[i] := found_id;
      END IF;
    END LOOP;
  END IF;
  FOR k IN SELECT x.i FROM generate_subscripts(ids, 1) AS x(i) ORDER BY ids[x.i] LOOP
    SELECT a.id, a.balance, a.normal_side, a.non_negative INTO acc FROM ledger_accounts a WHERE a.id = ids[k] FOR
      UPDATE;
    IF acc.normal_side <> p_normal_side[k] OR acc.non_negative <> p_non_negative[k] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    RETURN QUERY SELECT k, acc.id, acc.balance;
  END LOOP;
END
$function$
