import { sql, type Kysely } from 'kysely';

/**
 * Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
 * merchants, so the statements it shares take one list of merchants and environments instead of
 * one of each. Each is the function of an earlier migration with that one change:
 *
 * - `mwa_store_results_across`: `mwa_store_results` (043), a merchant and environment per key;
 * - `mwa_insert_deposits_across`: `mwa_insert_deposits` (043), a merchant and environment per
 *   deposit, each created at its own merchant's time (the sandbox clock's offset);
 * - `mwa_lock_accounts_across`: `mwa_lock_accounts` (034), an environment per account;
 * - `mwa_post_entries_across`: `mwa_post_entries` (032, 034), an environment per account and a
 *   merchant and environment per entry; it takes the write lock of each of its merchants in one
 *   global order (byte order of the lock's name) before any account, as `mwa_claim_keys` does.
 *
 * Each runs with `plan_cache_mode = force_generic_plan`, as `mwa_deposit_batch` did (043,
 * docs/group-commit.md): PostgreSQL otherwise judged the generic plan of a statement over a
 * batch's arrays dearer than a custom one and planned it anew on every call. Every statement in
 * them is a look-up by key or by id, so the generic plan is the plan (test/ledger-plans.test.ts).
 *
 * `mwa_deposit_batch` (043) is dropped: it rendered HTTP answers in SQL; a deposit now has one
 * implementation (the deposits module's `createDeposits`). A process of the previous release
 * still calling it fails that batch, whose writes it then runs again one by one in transactions.
 * The functions it replaces stay for such processes until the release after.
 */
const storeResults = `CREATE FUNCTION mwa_store_results_across(
  p_merchant_ids text[], p_environments text[], p_keys text[], p_endpoints text[], p_request_hashes text[],
  p_status int[], p_bodies text[], p_window_hours int, p_claim_status int
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO idempotency_keys (merchant_id, environment, key, endpoint, request_hash, status_code, response_body)
  SELECT r.merchant_id, r.environment, r.key, r.endpoint, r.request_hash, r.status_code, r.response_body
  FROM unnest(p_merchant_ids, p_environments, p_keys, p_endpoints, p_request_hashes, p_status, p_bodies)
    AS r(merchant_id, environment, key, endpoint, request_hash, status_code, response_body)
  ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
    endpoint = excluded.endpoint, request_hash = excluded.request_hash, status_code = excluded.status_code,
    response_body = excluded.response_body, created_at = now()
  WHERE idempotency_keys.created_at <= now() - make_interval(hours => p_window_hours)
     OR idempotency_keys.status_code = p_claim_status;
END
$$`;

const insertDeposits = `CREATE FUNCTION mwa_insert_deposits_across(
  p_merchant_ids text[], p_environments text[],
  p_ids text[], p_member_refs text[], p_assets text[], p_networks text[], p_amounts numeric[], p_tx_hashes text[]
) RETURNS TABLE (ord int, member_found boolean, member_external_id text, deposit deposits) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH input AS (
      SELECT * FROM unnest(p_merchant_ids, p_environments, p_ids, p_member_refs, p_assets, p_networks, p_amounts, p_tx_hashes)
        WITH ORDINALITY AS i(merchant_id, environment, id, member_ref, asset, network, amount, tx_hash, ord)
    ),
    resolved AS MATERIALIZED (
      SELECT i.*, m.id AS member_id, m.external_member_id, m.status AS member_status
      FROM input i
      LEFT JOIN LATERAL (
        SELECT c.id, c.external_member_id, c.status FROM (
          -- By the primary key alone (OFFSET 0 keeps the merchant's condition out of the scan), as
          -- in mwa_insert_deposits.
          SELECT by_id.id, by_id.external_member_id, by_id.status, 1 AS preference FROM (
            SELECT mm.id, mm.external_member_id, mm.status, mm.merchant_id, mm.environment FROM members mm WHERE mm.id = i.member_ref OFFSET 0
          ) by_id
          WHERE by_id.merchant_id = i.merchant_id AND by_id.environment = i.environment
          UNION ALL
          SELECT mm.id, mm.external_member_id, mm.status, 2 FROM members mm
          WHERE mm.external_member_id = i.member_ref AND mm.merchant_id = i.merchant_id AND mm.environment = i.environment
        ) c ORDER BY c.preference LIMIT 1
      ) m ON true
    ),
    inserted AS (
      INSERT INTO deposits AS d (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status, created_at)
      SELECT r.id, r.merchant_id, r.environment, r.member_id, r.asset, r.network, r.amount, r.tx_hash, 'credited',
             now() + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id = r.merchant_id AND r.environment = 'sandbox'), 0)
                     * interval '1 millisecond'
      FROM resolved r WHERE r.member_status = 'active'
      ORDER BY r.ord
      ON CONFLICT (merchant_id, environment, asset, tx_key) DO NOTHING
      RETURNING d
    )
    SELECT r.ord::int, r.member_status IS NOT DISTINCT FROM 'active', r.external_member_id, ins.d
    FROM resolved r LEFT JOIN inserted ins ON (ins.d).id = r.id
    ORDER BY r.ord;
END
$$`;

const lockAccounts = `CREATE FUNCTION mwa_lock_accounts_across(
  p_environment text[], p_asset text[], p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[]
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
    WHERE a.environment = p_environment[i] AND a.owner_type = p_owner_type[i] AND a.owner_id = p_owner_id[i]
      AND a.asset = p_asset[i] AND a.bucket = p_bucket[i];
    ids[i] := found_id;
    missing := missing OR found_id IS NULL;
  END LOOP;
  IF missing THEN
    INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
    SELECT p_environment[t.i], p_owner_type[t.i], p_owner_id[t.i], p_asset[t.i], p_bucket[t.i], p_normal_side[t.i], p_non_negative[t.i]
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
    SELECT a.id, a.balance, a.normal_side, a.non_negative INTO acc FROM ledger_accounts a WHERE a.id = ids[k] FOR UPDATE;
    IF acc.normal_side <> p_normal_side[k] OR acc.non_negative <> p_non_negative[k] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    RETURN QUERY SELECT k, acc.id, acc.balance;
  END LOOP;
END
$$`;

const postEntries = `CREATE FUNCTION mwa_post_entries_across(
  p_account_environment text[], p_asset text[], p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[],
  p_entry_environment text[], p_entry_merchant text[],
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
  lock_name text;
  e int;
  short_at int;
  inserted text;
  inserted_ids text[];
BEGIN
  FOR lock_name IN
    SELECT DISTINCT 'merchant-writes|' || x.merchant_id || '|' || x.environment COLLATE "C" AS name
    FROM unnest(p_entry_merchant, p_entry_environment) AS x(merchant_id, environment)
    WHERE x.merchant_id IS NOT NULL
    ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(lock_name, 0));
  END LOOP;

  FOR acc IN SELECT * FROM mwa_lock_accounts_across(p_account_environment, p_asset, p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative) LOOP
    ids[acc.ord] := acc.id;
    bal[acc.ord] := acc.balance;
  END LOOP;

  IF NOT EXISTS (SELECT 1 FROM unnest(p_delta_account, p_delta) AS x(account, delta) WHERE p_non_negative[x.account] AND x.delta < 0) THEN
    -- Nothing takes from an account that must stay non-negative: one insert, as in mwa_post_entries.
    WITH ins AS (
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      SELECT p_entry_id[t.e], p_entry_environment[t.e], p_kind[t.e], p_reference_type[t.e], p_reference_id[t.e], p_entry_merchant[t.e], p_entry_asset[t.e]
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
        IF EXISTS (SELECT 1 FROM journal_entries j WHERE j.environment = p_entry_environment[e] AND j.reference_type = p_reference_type[e]
                     AND j.reference_id = p_reference_id[e] AND j.kind = p_kind[e]) THEN
          RETURN QUERY SELECT e, 'duplicate'::text, NULL::int;
        ELSE
          RETURN QUERY SELECT e, 'short'::text, short_at;
        END IF;
        CONTINUE;
      END IF;
      inserted := NULL;
      INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
      VALUES (p_entry_id[e], p_entry_environment[e], p_kind[e], p_reference_type[e], p_reference_id[e], p_entry_merchant[e], p_entry_asset[e])
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

const genericPlans = [
  'mwa_store_results_across(text[], text[], text[], text[], text[], int[], text[], int, int)',
  'mwa_insert_deposits_across(text[], text[], text[], text[], text[], text[], numeric[], text[])',
  'mwa_lock_accounts_across(text[], text[], text[], text[], text[], text[], boolean[])',
  'mwa_post_entries_across(text[], text[], text[], text[], text[], text[], boolean[], text[], text[], text[], text[], text[], text[], text[], int[], int[], numeric[], int[], int[], numeric[])',
  'mwa_claim_keys(text[], text[], text[], text[], text[], int, text[], timestamptz[], timestamptz[])',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const fn of [storeResults, insertDeposits, lockAccounts, postEntries]) await sql.raw(fn).execute(db);
  for (const fn of genericPlans)
    await sql.raw(`ALTER FUNCTION ${fn} SET plan_cache_mode = force_generic_plan`).execute(db);
  await sql`DROP FUNCTION IF EXISTS mwa_deposit_batch`.execute(db);
}
