import { sql, type Kysely } from 'kysely';

/**
 * `mwa_post_entries` (migration 032) with a path for a call in which no entry takes from an
 * account that must stay non-negative (a batch of deposits: each only adds to two accounts): no
 * entry of such a call can fall short, so its journal entries are inserted in one statement
 * instead of a look-up and an insert per entry, with the same answers (a repeat of an earlier
 * posting, or of an earlier entry of the call, is 'duplicate' and writes nothing). Any other call
 * runs the loop of migration 032 unchanged. The function is otherwise the same.
 */
const postEntriesFunction = `CREATE OR REPLACE FUNCTION mwa_post_entries(
  p_environment text, p_merchant_id text,
  p_asset text[], p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[],
  p_entry_id text[], p_kind text[], p_reference_type text[], p_reference_id text[], p_entry_asset text[],
  p_delta_entry int[], p_delta_account int[], p_delta numeric[],
  p_line_entry int[], p_line_account int[], p_line_amount numeric[]
) RETURNS TABLE (entry_index int, status text, account_index int) LANGUAGE plpgsql AS $$
DECLARE
  n int := coalesce(array_length(p_owner_type, 1), 0);
  m int := coalesce(array_length(p_entry_id, 1), 0);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  bal numeric[] := array_fill(NULL::numeric, ARRAY[n]);
  posted boolean[] := array_fill(false, ARRAY[m]);
  acc record;
  step record;
  i int;
  e int;
  short_at int;
  inserted text;
  inserted_ids text[];
BEGIN
  IF p_merchant_id IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('merchant-writes|' || p_merchant_id || '|' || p_environment, 0));
  END IF;

  INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
  SELECT p_environment, t.owner_type, t.owner_id, t.asset, t.bucket, t.normal_side, t.non_negative
  FROM unnest(p_asset, p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative) WITH ORDINALITY
       AS t(asset, owner_type, owner_id, bucket, normal_side, non_negative, ord)
  WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.environment = p_environment AND a.asset = t.asset
                      AND a.owner_type = t.owner_type AND a.owner_id = t.owner_id AND a.bucket = t.bucket)
  ORDER BY t.ord
  ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;

  FOR acc IN
    SELECT a.id, a.balance, a.normal_side, a.non_negative, t.ord::int AS ord
    FROM ledger_accounts a
    JOIN unnest(p_asset, p_owner_type, p_owner_id, p_bucket) WITH ORDINALITY AS t(asset, owner_type, owner_id, bucket, ord)
      ON a.asset = t.asset AND a.owner_type = t.owner_type AND a.owner_id = t.owner_id AND a.bucket = t.bucket
    WHERE a.environment = p_environment
    ORDER BY a.id
    FOR UPDATE OF a
  LOOP
    IF acc.normal_side <> p_normal_side[acc.ord] OR acc.non_negative <> p_non_negative[acc.ord] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    ids[acc.ord] := acc.id;
    bal[acc.ord] := acc.balance;
  END LOOP;
  FOR i IN 1..n LOOP
    IF ids[i] IS NULL THEN RAISE EXCEPTION 'ledger: account % of the entries was not locked', i; END IF;
  END LOOP;

  IF NOT EXISTS (SELECT 1 FROM unnest(p_delta_account, p_delta) AS x(account, delta) WHERE p_non_negative[x.account] AND x.delta < 0) THEN
    -- Nothing takes from an account that must stay non-negative, so no entry can fall short and
    -- none depends on the balances an earlier one leaves: the entries are inserted in one
    -- statement, in order, a repeat (of an earlier posting, or of an earlier entry of this call)
    -- inserting nothing, as the loop below would decide one by one.
    WITH ins AS (
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      SELECT p_entry_id[t.e], p_environment, p_kind[t.e], p_reference_type[t.e], p_reference_id[t.e], p_merchant_id, p_entry_asset[t.e]
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
      short_at := NULL;
      SELECT x.account INTO short_at
      FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account, delta)
      WHERE x.entry = e AND p_non_negative[x.account] AND bal[x.account] + x.delta < 0
      ORDER BY ids[x.account]
      LIMIT 1;
      IF short_at IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM journal_entries j WHERE j.environment = p_environment AND j.reference_type = p_reference_type[e]
                     AND j.reference_id = p_reference_id[e] AND j.kind = p_kind[e]) THEN
          RETURN QUERY SELECT e, 'duplicate'::text, NULL::int;
        ELSE
          RETURN QUERY SELECT e, 'short'::text, short_at;
        END IF;
        CONTINUE;
      END IF;
      inserted := NULL;
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      VALUES (p_entry_id[e], p_environment, p_kind[e], p_reference_type[e], p_reference_id[e], p_merchant_id, p_entry_asset[e])
      ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
      RETURNING id INTO inserted;
      IF inserted IS NULL THEN
        RETURN QUERY SELECT e, 'duplicate'::text, NULL::int;
        CONTINUE;
      END IF;
      FOR step IN SELECT x.account, x.delta FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account, delta) WHERE x.entry = e LOOP
        bal[step.account] := bal[step.account] + step.delta;
      END LOOP;
      posted[e] := true;
      RETURN QUERY SELECT e, 'ok'::text, NULL::int;
    END LOOP;
  END IF;

  UPDATE ledger_accounts a SET balance = a.balance + s.delta
  FROM (SELECT x.account, sum(x.delta) AS delta
        FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account, delta)
        WHERE posted[x.entry] GROUP BY x.account) AS s
  WHERE a.id = ids[s.account] AND s.delta <> 0;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id[l.entry], ids[l.account], p_asset[l.account], l.amount
  FROM unnest(p_line_entry, p_line_account, p_line_amount) WITH ORDINALITY AS l(entry, account, amount, ord)
  WHERE posted[l.entry]
  ORDER BY l.ord;
END
$$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(postEntriesFunction).execute(db);
}
