-- mwa_post_entries_across
--
-- Posts many balanced entries, of any merchants, in one call (`postEntries`, src/money/post-many.ts):
-- group commit (docs/group-commit.md) writes a batch with one posting statement. Each entry gets
-- the answer `mwa_post_entry` would have given it, called once per entry in the same order in one
-- transaction: the write lock of each of its merchants first, in one global order (byte order of
-- the lock's name, as `mwa_claim_keys` takes them), missing accounts created in key order, the
-- touched accounts locked in ascending id order and their rules checked
-- (`mwa_lock_accounts_across`), then entry by entry: a shortfall ('short' and the first account
-- in lock order) or a repeat ('duplicate') refuses that entry alone and writes nothing of it; a
-- later entry sees the balances the earlier posted ones left. The balances are then updated once
-- per account, in one statement, and the postings written in entry and line order.
--
-- Accounts come as parallel arrays, one element per distinct account of the call in creation
-- order (asset, then key) with its environment; entries with their merchant and environment;
-- deltas as (entry, account, change of the stored balance); lines as (entry, account, signed
-- amount: debit positive). Indexes are 1-based. A call in which no entry takes from an account
-- that must stay non-negative (a batch of deposits) cannot fall short, so its journal entries are
-- inserted in one statement, with the same answers.
--
-- Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
-- merchants, so the statements it shares take one list of merchants and environments instead of
-- one of each.
--
-- `p_entry_requires` (optional; NULL for none): an entry's element names the (1-based) entry that
-- must post before it may: when that one did not (a shortfall, a repeat, or its own requirement
-- unmet), this one is 'skipped' and writes nothing. An exchange's buy requires its sell, so both
-- go in one call (src/modules/exchange/market-orders.ts).
--
-- Runs with `plan_cache_mode = force_generic_plan` (docs/group-commit.md): PostgreSQL otherwise
-- judged the generic plan of a statement over a batch's arrays dearer than a custom one and
-- planned it anew on every call. Every statement in it is a look-up by key or by id, so the
-- generic plan is the plan (test/ledger-plans.test.ts).
-- History: migration 051, replacing `mwa_post_entries` (032, 034), which migration 052 dropped; migration 055
-- dropped the form without `p_entry_requires`.
CREATE OR REPLACE FUNCTION public.mwa_post_entries_across(p_account_environment text[], p_asset text[],
    p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[],
    p_entry_environment text[], p_entry_merchant text[], p_entry_id text[], p_kind text[], p_reference_type text[],
    p_reference_id text[], p_entry_asset text[], p_delta_entry integer[], p_delta_account integer[], p_delta numeric[],
    p_line_entry integer[], p_line_account integer[], p_line_amount numeric[],
    p_entry_requires integer[] DEFAULT NULL::integer[])
 RETURNS TABLE(entry_index integer, status text, account_index integer)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
  n int := coalesce(array_length(p_owner_type, 1), 0);
  m int := coalesce(array_length(p_entry_id, 1), 0);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  bal numeric[] := array_fill(NULL::numeric, ARRAY[n]);
  posted boolean[] := array_fill(false, ARRAY[m]);
  acc record;
  step record;
  lock_name text;
  e int;
  short_at int;
  inserted text;
  inserted_ids text[];
  changed_ids bigint[];
  changed_deltas numeric[];
BEGIN
  FOR lock_name IN
    SELECT DISTINCT 'merchant-writes|' || x.merchant_id || '|' || x.environment COLLATE "C" AS name
    FROM unnest(p_entry_merchant, p_entry_environment) AS x(merchant_id, environment)
    WHERE x.merchant_id IS NOT NULL
    ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(lock_name, 0));
  END LOOP;

  FOR acc IN SELECT * FROM mwa_lock_accounts_across(p_account_environment, p_asset, p_owner_type, p_owner_id, p_bucket,
    p_normal_side, p_non_negative) LOOP
    ids[acc.ord] := acc.id;
    bal[acc.ord] := acc.balance;
  END LOOP;

  IF p_entry_requires IS NULL AND NOT EXISTS (SELECT 1 FROM unnest(p_delta_account, p_delta) AS x(account, delta)
    WHERE p_non_negative[x.account] AND x.delta < 0) THEN
    -- Nothing takes from an account that must stay non-negative: one insert, as in mwa_post_entries.
    WITH ins AS (
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      SELECT p_entry_id[t.e], p_entry_environment[t.e], p_kind[t.e], p_reference_type[t.e], p_reference_id[t.e],
        p_entry_merchant[t.e], p_entry_asset[t.e]
      FROM generate_subscripts(p_entry_id, 1) AS t(e)
      ORDER BY t.e
      ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
      RETURNING id
    )
    SELECT coalesce(array_agg(id), '{}') INTO inserted_ids FROM ins;
    FOR e IN 1..m LOOP
      posted[e] := p_entry_id[e] = ANY(inserted_ids);
    END LOOP;
    RETURN QUERY SELECT t.e::int, CASE WHEN posted[t.e] THEN 'ok' ELSE 'duplicate' END, NULL::int
      FROM generate_subscripts(p_entry_id, 1) AS t(e);
  ELSE
    FOR e IN 1..m LOOP
      IF p_entry_requires[e] IS NOT NULL AND NOT posted[p_entry_requires[e]] THEN
        RETURN QUERY SELECT e, 'skipped'::text, NULL::int;
        CONTINUE;
      END IF;
      short_at := NULL;
      SELECT x.account INTO short_at
      FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account, delta)
      WHERE x.entry = e AND p_non_negative[x.account] AND bal[x.account] + x.delta < 0
      ORDER BY ids[x.account]
      LIMIT 1;
      IF short_at IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM journal_entries j WHERE j.environment = p_entry_environment[e] AND j.reference_type =
          p_reference_type[e]
                     AND j.reference_id = p_reference_id[e] AND j.kind = p_kind[e]) THEN
          RETURN QUERY SELECT e, 'duplicate'::text, NULL::int;
        ELSE
          RETURN QUERY SELECT e, 'short'::text, short_at;
        END IF;
        CONTINUE;
      END IF;
      inserted := NULL;
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      VALUES (p_entry_id[e], p_entry_environment[e], p_kind[e], p_reference_type[e], p_reference_id[e],
        p_entry_merchant[e], p_entry_asset[e])
      ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
      RETURNING id INTO inserted;
      IF inserted IS NULL THEN
        RETURN QUERY SELECT e, 'duplicate'::text, NULL::int;
        CONTINUE;
      END IF;
      FOR step IN SELECT x.account, x.delta FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account,
        delta) WHERE x.entry = e LOOP
        bal[step.account] := bal[step.account] + step.delta;
      END LOOP;
      posted[e] := true;
      RETURN QUERY SELECT e, 'ok'::text, NULL::int;
    END LOOP;
  END IF;

  -- Each changed account once, in one statement (its rows are locked already: no order to keep).
  SELECT array_agg(ids[d.account]), array_agg(d.delta) INTO changed_ids, changed_deltas
  FROM (
    SELECT x.account, sum(x.delta) AS delta FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account,
      delta)
    WHERE posted[x.entry] GROUP BY x.account HAVING sum(x.delta) <> 0
  ) AS d;
  IF changed_ids IS NOT NULL THEN
    UPDATE ledger_accounts a SET balance = a.balance + changed_deltas[array_position(changed_ids, a.id)]
    WHERE a.id = ANY(changed_ids);
  END IF;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id[l.entry], ids[l.account], p_asset[l.account], l.amount
  FROM unnest(p_line_entry, p_line_account, p_line_amount) WITH ORDINALITY AS l(entry, account, amount, ord)
  WHERE posted[l.entry]
  ORDER BY l.ord;
END
$function$
