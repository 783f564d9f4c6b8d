-- mwa_lock_accounts_across
--
-- The accounts of a posting, each with its environment (`mwa_lock_accounts` calls it with one
-- environment for all): each account looked up by its whole key, the missing ones created in the
-- order given, then each locked by its id in ascending id order and its rules checked against the
-- caller's. Three statements whatever the number of accounts (one look-up, one lock, one more
-- look-up when some were created): a batch of nine deposits has eighteen accounts, which the
-- loops of the earlier version looked up and locked in thirty-six statements. The look-up is a
-- lateral subquery per account, an index probe by the whole key under any plan: its `LIMIT 1`
-- (the key is unique) keeps PostgreSQL from flattening it into a join, which the generic plan
-- made a hash of the whole table (test/ledger-plans.test.ts). The lock is one `id = ANY(...)`
-- scan of the primary key, sorted before its rows are locked.
--
-- Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
-- merchants, so the statements it shares take one list of merchants and environments instead of
-- one of each.
--
-- Runs with `plan_cache_mode = force_generic_plan` (docs/group-commit.md): PostgreSQL otherwise
-- judged the generic plan of a statement over a batch's arrays dearer than a custom one and
-- planned it anew on every call. Every statement in it is a look-up by key or by id, so the
-- generic plan is the plan (test/ledger-plans.test.ts).
-- History: migration 051; set-based look-up and lock since issue 37.
CREATE OR REPLACE FUNCTION public.mwa_lock_accounts_across(p_environment text[], p_asset text[], p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[])
 RETURNS TABLE(ord integer, id bigint, balance numeric)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
  n int := coalesce(array_length(p_owner_type, 1), 0);
  ids bigint[];
  acc record;
  k int;
BEGIN
  IF n = 0 THEN RETURN; END IF;
  -- Looked up; the missing ones created, then looked up once more.
  FOR attempt IN 1..2 LOOP
    SELECT array_agg(f.id ORDER BY t.i) INTO ids
    FROM generate_subscripts(p_owner_type, 1) AS t(i)
    LEFT JOIN LATERAL (
      SELECT a.id FROM ledger_accounts a
      WHERE a.environment = p_environment[t.i] AND a.owner_type = p_owner_type[t.i] AND a.owner_id = p_owner_id[t.i]
        AND a.asset = p_asset[t.i] AND a.bucket = p_bucket[t.i]
      LIMIT 1
    ) AS f ON true;
    k := array_position(ids, NULL);
    EXIT WHEN k IS NULL;
    IF attempt = 2 THEN RAISE EXCEPTION 'ledger: account % of the entries was not created', k; END IF;
    INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
    SELECT p_environment[t.i], p_owner_type[t.i], p_owner_id[t.i], p_asset[t.i], p_bucket[t.i], p_normal_side[t.i],
      p_non_negative[t.i]
    FROM generate_subscripts(p_owner_type, 1) AS t(i)
    WHERE ids[t.i] IS NULL
    ORDER BY t.i
    ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;
  END LOOP;
  -- Locked in ascending id order (the sort runs before the rows are locked): one global order.
  FOR acc IN SELECT a.id, a.balance, a.normal_side, a.non_negative FROM ledger_accounts a WHERE a.id = ANY(ids)
    ORDER BY a.id FOR UPDATE LOOP
    k := array_position(ids, acc.id);
    IF acc.normal_side <> p_normal_side[k] OR acc.non_negative <> p_non_negative[k] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    ord := k;
    id := acc.id;
    balance := acc.balance;
    RETURN NEXT;
  END LOOP;
END
$function$
