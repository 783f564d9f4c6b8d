import { sql, type Kysely } from 'kysely';

/**
 * A batch of deposits in one statement (issue 16, docs/group-commit.md "One statement a batch"):
 * the claim, the rows, the postings, the events and the idempotency records of a group commit's
 * batch in one autocommitted call instead of six round trips (`BEGIN`, claim, rows, postings,
 * records, `COMMIT`). Three functions:
 *
 * - `mwa_store_results`: the records of a batch's finished writes, as `runWriteBatch` stored them
 *   (a row older than the window is a new key, a lapsed claim is replaced); both paths use it.
 * - `mwa_insert_deposits`: the members resolved and the rows inserted, as `insertDeposits`
 *   (src/modules/deposits/queries.ts) did in its own statement; both paths use it.
 * - `mwa_deposit_batch`: `mwa_claim_keys` (migration 033), then the writes that run (a fresh or
 *   absent nonce, the key's lock taken, no record within the window, the first write of its key
 *   in the batch): each one refused before the statement (its fields: the caller's body) or
 *   inserted through `mwa_insert_deposits`; the inserted ones posted through the ledger's
 *   `mwa_post_entries` (a refusal there raises: the caller then runs the writes one by one, as
 *   before), their events written, and every result stored through `mwa_store_results`.
 *   The caller renders each deposit's answer before the call, around its two values the
 *   statement decides (the member's id, when the request named the external id, and the time);
 *   the stored body and the answer are the same text. `created_at` (the deposit's and its
 *   event's) is kept to the millisecond, the precision of the answer, so that a later read shows
 *   the same time. A key holding a claim for the same request (a record that is no result: in
 *   progress, or lapsed and to run anew) declines the whole statement (SQLSTATE MWB01, nothing
 *   kept): the caller runs the batch in a transaction, where such a key is judged in order.
 *   The ledger's lines come from the caller per deposit (one element per line: its account,
 *   whose owner is the deposit's member when `p_line_owner_id` is null, the change of the stored
 *   balance and the signed amount); every account of an entry is on one line.
 *   One row per write, in order: what the claim found (`fresh`, `locked`, the record of a write
 *   that did not run) or, for a write that ran, its outcome and the result stored.
 */
const storeResultsFunction = `CREATE FUNCTION mwa_store_results(
  p_merchant_id text, p_environment text, p_keys text[], p_endpoints text[], p_request_hashes text[],
  p_status int[], p_bodies text[], p_window_hours int, p_claim_status int
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO idempotency_keys (merchant_id, environment, key, endpoint, request_hash, status_code, response_body)
  SELECT p_merchant_id, p_environment, r.key, r.endpoint, r.request_hash, r.status_code, r.response_body
  FROM unnest(p_keys, p_endpoints, p_request_hashes, p_status, p_bodies) AS r(key, endpoint, request_hash, status_code, response_body)
  ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
    endpoint = excluded.endpoint, request_hash = excluded.request_hash, status_code = excluded.status_code,
    response_body = excluded.response_body, created_at = now()
  WHERE idempotency_keys.created_at <= now() - make_interval(hours => p_window_hours)
     OR idempotency_keys.status_code = p_claim_status;
END
$$`;

const insertDepositsFunction = `CREATE FUNCTION mwa_insert_deposits(
  p_merchant_id text, p_environment text, p_created_at timestamptz,
  p_ids text[], p_member_refs text[], p_assets text[], p_networks text[], p_amounts numeric[], p_tx_hashes text[]
) RETURNS TABLE (ord int, member_found boolean, member_external_id text, deposit deposits) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH input AS (
      SELECT * FROM unnest(p_ids, p_member_refs, p_assets, p_networks, p_amounts, p_tx_hashes)
        WITH ORDINALITY AS i(id, member_ref, asset, network, amount, tx_hash, ord)
    ),
    resolved AS MATERIALIZED (
      SELECT i.*, m.id AS member_id, m.external_member_id, m.status AS member_status
      FROM input i
      LEFT JOIN LATERAL (
        SELECT c.id, c.external_member_id, c.status FROM (
          -- By the primary key alone (OFFSET 0 keeps the merchant's condition out of the scan): a
          -- plan made while the table was small used the merchant's index and filtered every
          -- member of the merchant on each deposit.
          SELECT by_id.id, by_id.external_member_id, by_id.status, 1 AS preference FROM (
            SELECT mm.id, mm.external_member_id, mm.status, mm.merchant_id, mm.environment FROM members mm WHERE mm.id = i.member_ref OFFSET 0
          ) by_id
          WHERE by_id.merchant_id = p_merchant_id AND by_id.environment = p_environment
          UNION ALL
          SELECT mm.id, mm.external_member_id, mm.status, 2 FROM members mm
          WHERE mm.external_member_id = i.member_ref AND mm.merchant_id = p_merchant_id AND mm.environment = p_environment
        ) c ORDER BY c.preference LIMIT 1
      ) m ON true
    ),
    inserted AS (
      INSERT INTO deposits AS d (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status, created_at)
      SELECT r.id, p_merchant_id, p_environment, r.member_id, r.asset, r.network, r.amount, r.tx_hash, 'credited', p_created_at
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

const depositBatchFunction = `CREATE FUNCTION mwa_deposit_batch(
  p_merchant_id text, p_environment text, p_now timestamptz, p_window_hours int, p_claim_status int, p_merchant_lock text,
  p_key_locks text[], p_keys text[], p_nonces text[], p_nonce_expires timestamptz[], p_nonce_now timestamptz[],
  p_endpoints text[], p_request_hashes text[],
  p_refused_status int[], p_refused_bodies text[],
  p_ids text[], p_member_refs text[], p_assets text[], p_networks text[], p_amounts numeric[], p_tx_hashes text[],
  p_ok_status int, p_body_heads text[], p_body_mids text[], p_body_tails text[],
  p_not_found_status int, p_not_found_bodies text[], p_duplicate_status int, p_duplicate_bodies text[],
  p_entry_ids text[], p_entry_kind text, p_reference_type text,
  p_line_item int[], p_line_owner_type text[], p_line_owner_id text[], p_line_bucket text[], p_line_normal_side text[],
  p_line_non_negative boolean[], p_line_delta numeric[], p_line_amount numeric[],
  p_event_ids text[], p_event_type text, p_event_object text, p_event_status text, p_event_status_version int, p_livemode boolean
) RETURNS TABLE (ord int, fresh boolean, locked boolean, ran boolean, outcome text,
                 endpoint text, request_hash text, status_code int, response_body text, created_at timestamptz)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  n int := coalesce(array_length(p_keys, 1), 0);
  fresh_of boolean[] := array_fill(NULL::boolean, ARRAY[n]);
  locked_of boolean[] := array_fill(false, ARRAY[n]);
  run boolean[] := array_fill(false, ARRAY[n]);
  outcome_of text[] := array_fill(NULL::text, ARRAY[n]);
  member_of text[] := array_fill(NULL::text, ARRAY[n]);
  external_of text[] := array_fill(NULL::text, ARRAY[n]);
  rec_endpoint text[] := array_fill(NULL::text, ARRAY[n]);
  rec_hash text[] := array_fill(NULL::text, ARRAY[n]);
  rec_status int[] := array_fill(NULL::int, ARRAY[n]);
  rec_body text[] := array_fill(NULL::text, ARRAY[n]);
  rec_at timestamptz[] := array_fill(NULL::timestamptz, ARRAY[n]);
  claimed text[] := '{}';
  to_insert int[] := '{}';
  in_ids text[] := '{}'; in_member_refs text[] := '{}'; in_assets text[] := '{}'; in_networks text[] := '{}';
  in_amounts numeric[] := '{}'; in_tx_hashes text[] := '{}';
  posted int[] := '{}';
  post_entry_ids text[] := '{}'; post_ids text[] := '{}'; post_assets text[] := '{}';
  created timestamptz := date_trunc('milliseconds', p_now);
  created_json text := to_json(to_char(created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text;
  acc_asset text[]; acc_owner_type text[]; acc_owner_id text[]; acc_bucket text[]; acc_normal_side text[]; acc_non_negative boolean[];
  ln_entry int[]; ln_account int[]; ln_delta numeric[]; ln_amount numeric[];
  run_keys text[] := '{}'; run_endpoints text[] := '{}'; run_hashes text[] := '{}'; run_status int[] := '{}'; run_bodies text[] := '{}';
  c record;
  i int;
  k int;
BEGIN
  FOR c IN SELECT * FROM mwa_claim_keys(ARRAY[p_merchant_lock], p_key_locks, array_fill(p_merchant_id, ARRAY[n]), array_fill(p_environment, ARRAY[n]),
                                        p_keys, p_window_hours, p_nonces, p_nonce_expires, p_nonce_now) LOOP
    i := c.ord;
    fresh_of[i] := c.fresh;
    locked_of[i] := c.locked;
    rec_endpoint[i] := c.endpoint; rec_hash[i] := c.request_hash; rec_status[i] := c.status_code; rec_body[i] := c.response_body; rec_at[i] := c.created_at;
    IF c.fresh IS DISTINCT FROM false AND c.locked AND c.status_code = p_claim_status
       AND c.endpoint = p_endpoints[i] AND c.request_hash = p_request_hashes[i] THEN
      -- A claim on the key for this very request: live (in progress) or lapsed (to run anew), as
      -- the server judges at the request's time. Declined: nothing of the statement is kept, and
      -- the caller runs the batch in a transaction, in order.
      RAISE EXCEPTION 'deposits: a key of the batch holds a claim' USING ERRCODE = 'MWB01';
    END IF;
    IF c.fresh IS DISTINCT FROM false AND c.locked AND c.endpoint IS NULL AND NOT (p_key_locks[i] = ANY(claimed)) THEN
      run[i] := true;
      claimed := claimed || p_key_locks[i];
      IF p_refused_status[i] IS NULL THEN
        to_insert := to_insert || i;
        in_ids := in_ids || p_ids[i]; in_member_refs := in_member_refs || p_member_refs[i]; in_assets := in_assets || p_assets[i];
        in_networks := in_networks || p_networks[i]; in_amounts := in_amounts || p_amounts[i]; in_tx_hashes := in_tx_hashes || p_tx_hashes[i];
      ELSE
        outcome_of[i] := 'refused';
      END IF;
    END IF;
  END LOOP;

  IF cardinality(to_insert) > 0 THEN
    FOR c IN
      SELECT r.ord, r.member_found, r.member_external_id, (r.deposit).id AS deposit_id, (r.deposit).member_id AS member_id
      FROM mwa_insert_deposits(p_merchant_id, p_environment, created, in_ids, in_member_refs, in_assets, in_networks, in_amounts, in_tx_hashes) r
    LOOP
      k := to_insert[c.ord];
      IF NOT c.member_found THEN
        outcome_of[k] := 'member_not_found';
      ELSIF c.deposit_id IS NULL THEN
        outcome_of[k] := 'duplicate_resource';
      ELSE
        outcome_of[k] := 'ok';
        member_of[k] := c.member_id;
        external_of[k] := coalesce(c.member_external_id, '');
        posted := posted || k;
        post_entry_ids := post_entry_ids || p_entry_ids[k]; post_ids := post_ids || p_ids[k]; post_assets := post_assets || p_assets[k];
      END IF;
    END LOOP;
  END IF;

  IF cardinality(posted) > 0 THEN
    -- The accounts of the posted deposits' lines, each once, in (asset, key) order as postEntries
    -- orders them; then each line's entry (its deposit's place among the posted) and account.
    WITH lines AS (
      SELECT p_assets[e.k] AS asset, p_line_owner_type[l.i] AS owner_type, coalesce(p_line_owner_id[l.i], member_of[e.k]) AS owner_id,
             p_line_bucket[l.i] AS bucket, p_line_normal_side[l.i] AS normal_side, p_line_non_negative[l.i] AS non_negative
      FROM unnest(posted) AS e(k) JOIN generate_subscripts(p_line_item, 1) AS l(i) ON p_line_item[l.i] = e.k
    ), accounts AS (
      SELECT d.*, row_number() OVER (ORDER BY d.asset COLLATE "C", d.owner_type COLLATE "C", d.owner_id COLLATE "C", d.bucket COLLATE "C") AS idx
      FROM (SELECT DISTINCT asset, owner_type, owner_id, bucket, normal_side, non_negative FROM lines) d
    )
    SELECT array_agg(a.asset ORDER BY a.idx), array_agg(a.owner_type ORDER BY a.idx), array_agg(a.owner_id ORDER BY a.idx),
           array_agg(a.bucket ORDER BY a.idx), array_agg(a.normal_side ORDER BY a.idx), array_agg(a.non_negative ORDER BY a.idx)
    INTO acc_asset, acc_owner_type, acc_owner_id, acc_bucket, acc_normal_side, acc_non_negative
    FROM accounts a;

    SELECT array_agg(e.o::int ORDER BY e.o, l.i), array_agg(a.idx::int ORDER BY e.o, l.i),
           array_agg(p_line_delta[l.i] ORDER BY e.o, l.i), array_agg(p_line_amount[l.i] ORDER BY e.o, l.i)
    INTO ln_entry, ln_account, ln_delta, ln_amount
    FROM unnest(posted) WITH ORDINALITY AS e(k, o)
    JOIN generate_subscripts(p_line_item, 1) AS l(i) ON p_line_item[l.i] = e.k
    LEFT JOIN unnest(acc_asset, acc_owner_type, acc_owner_id, acc_bucket) WITH ORDINALITY AS a(asset, owner_type, owner_id, bucket, idx)
      ON a.asset = p_assets[e.k] AND a.owner_type = p_line_owner_type[l.i]
     AND a.owner_id = coalesce(p_line_owner_id[l.i], member_of[e.k]) AND a.bucket = p_line_bucket[l.i];
    IF array_position(ln_account, NULL) IS NOT NULL THEN
      RAISE EXCEPTION 'deposits: a line of the batch has no account';
    END IF;

    FOR c IN
      SELECT * FROM mwa_post_entries(p_environment, p_merchant_id,
        acc_asset, acc_owner_type, acc_owner_id, acc_bucket, acc_normal_side, acc_non_negative,
        post_entry_ids, array_fill(p_entry_kind, ARRAY[cardinality(posted)]), array_fill(p_reference_type, ARRAY[cardinality(posted)]),
        post_ids, post_assets,
        ln_entry, ln_account, ln_delta, ln_entry, ln_account, ln_amount)
    LOOP
      IF c.status <> 'ok' THEN
        RAISE EXCEPTION 'deposits: the posting of % was refused in a batch (%)', p_ids[posted[c.entry_index]], c.status;
      END IF;
    END LOOP;

    INSERT INTO events (id, merchant_id, environment, type, object, object_id, external_member_id, status, status_version, livemode, created_at)
    SELECT p_event_ids[e.k], p_merchant_id, p_environment, p_event_type, p_event_object, p_ids[e.k], external_of[e.k],
           p_event_status, p_event_status_version, p_livemode, created
    FROM unnest(posted) WITH ORDINALITY AS e(k, o)
    ORDER BY e.o;
  END IF;

  FOR i IN 1..n LOOP
    CONTINUE WHEN NOT run[i];
    rec_endpoint[i] := p_endpoints[i];
    rec_hash[i] := p_request_hashes[i];
    CASE outcome_of[i]
      WHEN 'ok' THEN
        rec_status[i] := p_ok_status;
        rec_body[i] := p_body_heads[i] || to_json(member_of[i])::text || p_body_mids[i] || created_json || p_body_tails[i];
      WHEN 'member_not_found' THEN rec_status[i] := p_not_found_status; rec_body[i] := p_not_found_bodies[i];
      WHEN 'duplicate_resource' THEN rec_status[i] := p_duplicate_status; rec_body[i] := p_duplicate_bodies[i];
      ELSE rec_status[i] := p_refused_status[i]; rec_body[i] := p_refused_bodies[i];
    END CASE;
    rec_at[i] := now();
    run_keys := run_keys || p_keys[i];
    run_endpoints := run_endpoints || p_endpoints[i];
    run_hashes := run_hashes || p_request_hashes[i];
    run_status := run_status || rec_status[i];
    run_bodies := run_bodies || rec_body[i];
  END LOOP;
  IF cardinality(run_keys) > 0 THEN
    PERFORM mwa_store_results(p_merchant_id, p_environment, run_keys, run_endpoints, run_hashes, run_status, run_bodies, p_window_hours, p_claim_status);
  END IF;

  RETURN QUERY SELECT t.i::int, fresh_of[t.i], locked_of[t.i], run[t.i], outcome_of[t.i],
                      rec_endpoint[t.i], rec_hash[t.i], rec_status[t.i], rec_body[t.i], rec_at[t.i]
    FROM generate_series(1, n) AS t(i);
END
$$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(storeResultsFunction).execute(db);
  await sql.raw(insertDepositsFunction).execute(db);
  await sql.raw(depositBatchFunction).execute(db);
}
