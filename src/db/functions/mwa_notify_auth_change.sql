-- mwa_notify_auth_change
--
-- Every update or delete of a key, a merchant or a token notifies channel `mwa_auth`, so each
-- process can hold token, key and merchant state in memory and forget it the moment it changes
-- (src/platform/auth/auth-cache.ts). Statement-level triggers: one notification per statement, and
-- PostgreSQL folds identical notifications of one transaction into one, delivered at its commit.
--
-- Triggers (created by migration 024): api_keys_notify_auth_change, merchants_notify_auth_change,
-- access_tokens_notify_auth_change (AFTER UPDATE OR DELETE, FOR EACH STATEMENT).
-- History: migration 024 (issue 16, docs/performance.md).
CREATE OR REPLACE FUNCTION public.mwa_notify_auth_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('mwa_auth', TG_TABLE_NAME);
  RETURN NULL;
END
$function$
