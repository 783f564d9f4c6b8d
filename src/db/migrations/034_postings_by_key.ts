import { sql, type Kysely } from 'kysely';

/**
 * Postings whose statements PostgreSQL plans the same way however small the tables were when it
 * first planned them (issue 16):
 *
 * - `mwa_lock_accounts`, shared by both posting functions: each account of a posting is looked up
 *   by its whole key, one row at a time; the missing ones are created (in the order given, the
 *   callers' key order); then each is locked by its id, in ascending id order, and its rules
 *   checked against the caller's. The functions of migrations 024 and 032 joined the accounts
 *   with `unnest` of their arrays: PL/pgSQL keeps a generic plan of each statement, and a plan
 *   made while `ledger_accounts` was small looked up the environment only and filtered every
 *   account of it, on every posting, as the table grew (seen with auto_explain: `Index Cond:
 *   (environment = $1)`, the rest a join filter). A look-up by the whole key, or by the id, has
 *   no such plan. The balances are updated one account at a time, by id, for the same reason.
 * - `mwa_post_entries` (migration 032), besides: a call in which no entry takes from an account
 *   that must stay non-negative (a batch of deposits: each only adds to two accounts) cannot have
 *   a shortfall, so its journal entries are inserted in one statement instead of a look-up and
 *   an insert per entry, with the same answers (a repeat of an earlier posting, or of an earlier
 *   entry of the call, is 'duplicate' and writes nothing). Any other call runs the loop of 032.
 * - `mwa_post_entry_rows` (migration 024's `mwa_post_entry`, renamed by 031): the same answers;
 *   an account whose stored rules differ from the caller's raises before any shortfall is told
 *   (a programming error either way).
 */
const lockAccountsFunction = `CREATE FUNCTION mwa_lock_accounts(
  p_environment text, p_asset text[], p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[]
) RETURNS TABLE (ord int, id bigint, balance numeric) LANGUAGE plpgsql AS $$
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
    SELECT p_environment, p_owner_type[t.i], p_owner_id[t.i], p_asset[t.i], p_bucket[t.i], p_normal_side[t.i], p_non_negative[t.i]
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
    SELECT a.id, a.balance, a.normal_side, a.non_negative INTO acc FROM ledger_accounts a WHERE a.id = ids[k] FOR UPDATE;
    IF acc.normal_side <> p_normal_side[k] OR acc.non_negative <> p_non_negative[k] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    RETURN QUERY SELECT k, acc.id, acc.balance;
  END LOOP;
END
$$`;

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
  e int;
  short_at int;
  inserted text;
  inserted_ids text[];
BEGIN
  IF p_merchant_id IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('merchant-writes|' || p_merchant_id || '|' || p_environment, 0));
  END IF;

  FOR acc IN SELECT * FROM mwa_lock_accounts(p_environment, p_asset, p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative) LOOP
    ids[acc.ord] := acc.id;
    bal[acc.ord] := acc.balance;
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

  FOR step IN
    SELECT x.account, sum(x.delta) AS delta FROM unnest(p_delta_entry, p_delta_account, p_delta) AS x(entry, account, delta)
    WHERE posted[x.entry] GROUP BY x.account HAVING sum(x.delta) <> 0
  LOOP
    UPDATE ledger_accounts SET balance = balance + step.delta WHERE id = ids[step.account];
  END LOOP;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id[l.entry], ids[l.account], p_asset[l.account], l.amount
  FROM unnest(p_line_entry, p_line_account, p_line_amount) WITH ORDINALITY AS l(entry, account, amount, ord)
  WHERE posted[l.entry]
  ORDER BY l.ord;
END
$$`;

const postEntryRowsFunction = `CREATE OR REPLACE FUNCTION mwa_post_entry_rows(
  p_entry_id text, p_environment text, p_kind text, p_reference_type text, p_reference_id text,
  p_merchant_id text, p_asset text,
  p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[], p_delta numeric[],
  p_line_account int[], p_line_amount numeric[]
) RETURNS TABLE (status text, account_index int) LANGUAGE plpgsql AS $$
DECLARE
  n int := array_length(p_owner_type, 1);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  acc record;
  i int;
  inserted text;
BEGIN
  FOR acc IN SELECT * FROM mwa_lock_accounts(p_environment, array_fill(p_asset, ARRAY[n]), p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative) LOOP
    ids[acc.ord] := acc.id;
    IF p_non_negative[acc.ord] AND acc.balance + p_delta[acc.ord] < 0 THEN
      IF EXISTS (SELECT 1 FROM journal_entries e WHERE e.environment = p_environment AND e.reference_type = p_reference_type
                   AND e.reference_id = p_reference_id AND e.kind = p_kind) THEN
        RETURN QUERY SELECT 'duplicate'::text, NULL::int;
      ELSE
        RETURN QUERY SELECT 'short'::text, acc.ord;
      END IF;
      RETURN;
    END IF;
  END LOOP;

  INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
  VALUES (p_entry_id, p_environment, p_kind, p_reference_type, p_reference_id, p_merchant_id, p_asset)
  ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
  RETURNING id INTO inserted;
  IF inserted IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, NULL::int;
    RETURN;
  END IF;

  FOR i IN 1..n LOOP
    IF p_delta[i] <> 0 THEN
      UPDATE ledger_accounts SET balance = balance + p_delta[i] WHERE id = ids[i];
    END IF;
  END LOOP;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id, ids[l.account], p_asset, l.amount
  FROM unnest(p_line_account, p_line_amount) WITH ORDINALITY AS l(account, amount, ord)
  ORDER BY l.ord;

  RETURN QUERY SELECT 'ok'::text, NULL::int;
END
$$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(lockAccountsFunction).execute(db);
  await sql.raw(postEntriesFunction).execute(db);
  await sql.raw(postEntryRowsFunction).execute(db);
}
