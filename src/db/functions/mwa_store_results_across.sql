-- mwa_store_results_across
--
-- The records of a batch's finished writes (idempotency results), of any merchants, a merchant
-- and environment per key (a row older than the window is a new key, a lapsed claim is replaced).
--
-- Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
-- merchants, so the statements it shares take one list of merchants and environments instead of
-- one of each.
--
-- Runs with `plan_cache_mode = force_generic_plan` (docs/group-commit.md): PostgreSQL otherwise
-- judged the generic plan of a statement over a batch's arrays dearer than a custom one and
-- planned it anew on every call. Every statement in it is a look-up by key or by id, so the
-- generic plan is the plan (test/ledger-plans.test.ts).
-- History: migration 051, replacing `mwa_store_results` (043), which migration 052 dropped.
CREATE OR REPLACE FUNCTION public.mwa_store_results_across(p_merchant_ids text[], p_environments text[], p_keys text[],
    p_endpoints text[], p_request_hashes text[], p_status integer[], p_bodies text[], p_window_hours integer,
    p_claim_status integer)
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
$function$
