-- mwa_notify_asset_change
--
-- Every insert, update or delete of `assets` or `asset_networks` notifies channel `mwa_asset`, so
-- each process can hold the asset catalogue that money writes read
-- (src/modules/assets/catalogue-cache.ts) and forget it the moment the operator changes it.
--
-- Triggers (created by migration 027): assets_notify_asset_change,
-- asset_networks_notify_asset_change
-- (AFTER INSERT OR UPDATE OR DELETE, FOR EACH STATEMENT).
-- History: migration 027 (issue 16, docs/performance.md).
CREATE OR REPLACE FUNCTION public.mwa_notify_asset_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('mwa_asset', TG_TABLE_NAME);
  RETURN NULL;
END
$function$
