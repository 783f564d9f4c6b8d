-- mwa_claim_keys
--
-- Opens a group commit's batch in one statement (src/platform/writes/write-batch.ts, `runWriteBatch`;
-- docs/group-commit.md):
-- 1. the merchants' write locks, waited for, in the given order;
-- 2. the signed requests' nonces, consumed as `consumeNonce` does (src/platform/writes/nonces.ts: a new
--    row, or an expired one taken over; else the nonce is used), in one sorted order (byte order,
--    as the nonce batcher sorts its statements') so that two transactions consuming the same
--    nonces cannot wait in a cycle; a nonce named twice in the batch is fresh for its first
--    request only. They commit with the batch, so a batch that rolls back consumed none;
-- 3. per idempotency key its lock, tried (one held elsewhere answers `locked` false and is not
--    read), and the key's record within the window.
-- It replaces three statements: the nonces were consumed before the batch in an autocommitted
-- statement of their own (with its own commit), and the locks and the records read had to be two
-- because a statement sees the rows committed when it started. Here each read is a statement of
-- its own inside the function (READ COMMITTED gives every statement of a volatile function a new
-- snapshot), taken after its key's lock, so it sees the record of a transaction that held the
-- lock until its commit. Every statement is an index look-up by its key, whatever plan
-- PostgreSQL keeps for it.
--
-- One row per key, in order (`ord` 1-based): `fresh` is null for a request without a nonce; the
-- record's columns are null when there is none.
--
-- Runs with `plan_cache_mode = force_generic_plan` (see mwa_post_entries_across.sql).
-- History: migration 033; 051 set plan_cache_mode.
CREATE OR REPLACE FUNCTION public.mwa_claim_keys(p_merchant_locks text[], p_key_locks text[], p_merchant_ids text[],
    p_environments text[], p_keys text[], p_window_hours integer, p_nonces text[],
    p_nonce_expires timestamp with time zone[], p_nonce_now timestamp with time zone[])
 RETURNS TABLE(ord integer, fresh boolean, locked boolean, endpoint text, request_hash text, status_code integer,
    response_body text, created_at timestamp with time zone)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
  n int := coalesce(array_length(p_key_locks, 1), 0);
  fresh_of boolean[] := array_fill(NULL::boolean, ARRAY[n]);
  lock_name text;
  i int;
  got boolean;
  taken int;
BEGIN
  FOREACH lock_name IN ARRAY coalesce(p_merchant_locks, '{}') LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(lock_name, 0));
  END LOOP;
  FOR i IN
    SELECT x.ord FROM unnest(p_merchant_ids, p_environments, p_nonces) WITH ORDINALITY AS x(merchant_id, environment,
      nonce, ord)
    WHERE x.nonce IS NOT NULL
    ORDER BY x.merchant_id COLLATE "C", x.environment COLLATE "C", x.nonce COLLATE "C", x.ord
  LOOP
    INSERT INTO signature_nonces (merchant_id, environment, nonce, expires_at)
    VALUES (p_merchant_ids[i], p_environments[i], p_nonces[i], p_nonce_expires[i])
    ON CONFLICT (merchant_id, environment, nonce) DO UPDATE SET expires_at = excluded.expires_at
      WHERE signature_nonces.expires_at <= p_nonce_now[i];
    GET DIAGNOSTICS taken = ROW_COUNT;
    fresh_of[i] := taken = 1;
  END LOOP;
  FOR i IN 1..n LOOP
    got := pg_try_advisory_xact_lock(hashtextextended(p_key_locks[i], 0));
    IF NOT got THEN
      RETURN QUERY SELECT i, fresh_of[i], false, NULL::text, NULL::text, NULL::int, NULL::text, NULL::timestamptz;
      CONTINUE;
    END IF;
    RETURN QUERY
      SELECT i, fresh_of[i], true, k.endpoint, k.request_hash, k.status_code, k.response_body, k.created_at
      FROM (SELECT 1) AS one
      LEFT JOIN idempotency_keys k
        ON k.merchant_id = p_merchant_ids[i] AND k.environment = p_environments[i] AND k.key = p_keys[i]
       AND k.created_at > now() - make_interval(hours => p_window_hours);
  END LOOP;
END
$function$
