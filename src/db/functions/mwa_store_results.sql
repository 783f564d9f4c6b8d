-- mwa_store_results
--
-- The records of a batch's finished writes (idempotency results) of one merchant, as
-- `runWriteBatch` stored them (a row older than the window is a new key, a lapsed claim is
-- replaced).
--
-- Kept for processes of the release before `mwa_store_results_across` (migration 051) until the
-- release after; the current code calls the `_across` function.
-- History: migration 043 (issue 16, docs/group-commit.md "One statement a batch").
CREATE OR REPLACE FUNCTION public.mwa_store_results(p_merchant_id text, p_environment text, p_keys text[],
    p_endpoints text[], p_request_hashes text[], p_status integer[], p_bodies text[], p_window_hours integer,
    p_claim_status integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO idempotency_keys (merchant_id, environment, key, endpoint, request_hash, status_code, response_body)
  SELECT p_merchant_id, p_environment, r.key, r.endpoint, r.request_hash, r.status_code, r.response_body
  FROM unnest(p_keys, p_endpoints, p_request_hashes, p_status, p_bodies) AS r(key, endpoint, request_hash, status_code,
    response_body)
  ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
    endpoint = excluded.endpoint, request_hash = excluded.request_hash, status_code = excluded.status_code,
    response_body = excluded.response_body, created_at = now()
  WHERE idempotency_keys.created_at <= now() - make_interval(hours => p_window_hours)
     OR idempotency_keys.status_code = p_claim_status;
END
$function$
