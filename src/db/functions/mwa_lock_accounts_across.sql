-- mwa_lock_accounts_across
--
-- The accounts of a posting, each with its environment (`mwa_lock_accounts` calls it with one
-- environment for all): each account looked up by its whole key, the missing ones created in the
-- order given, then each locked by its id in ascending id order and its rules checked against the
-- caller's.
--
-- Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
-- merchants, so the statements it shares take one list of merchants and environments instead of
-- one of each.
--
-- Runs with `plan_cache_mode = force_generic_plan` (docs/group-commit.md): PostgreSQL otherwise
-- judged the generic plan of a statement over a batch's arrays dearer than a custom one and
-- planned it anew on every call. Every statement in it is a look-up by key or by id, so the
-- generic plan is the plan (test/ledger-plans.test.ts).
-- History: migration 051.
CREATE OR REPLACE FUNCTION public.mwa_lock_accounts_across(p_environment text[], p_asset text[], p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[])
 RETURNS TABLE(ord integer, id bigint, balance numeric)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
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
    WHERE a.environment = p_environment[i] AND a.owner_type = p_owner_type[i] AND a.owner_id = p_owner_id[i]
      AND a.asset = p_asset[i] AND a.bucket = p_bucket[i];
    ids[i] := found_id;
    missing := missing OR found_id IS NULL;
  END LOOP;
  IF missing THEN
    INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
    SELECT p_environment[t.i], p_owner_type[t.i], p_owner_id[t.i], p_asset[t.i], p_bucket[t.i], p_normal_side[t.i],
      p_non_negative[t.i]
    FROM generate_subscripts(p_owner_type, 1) AS t(i)
    WHERE ids[t.i] IS NULL
    ORDER BY t.i
    ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;
    FOR i IN 1..n LOOP
      IF ids[i] IS NULL THEN
        SELECT a.id INTO found_id FROM ledger_accounts a
        WHERE a.environment = p_environment[i] AND a.owner_type = p_owner_type[i] AND a.owner_id = p_owner_id[i]
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
