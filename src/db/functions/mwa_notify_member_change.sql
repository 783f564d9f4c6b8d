-- mwa_notify_member_change
--
-- Every update or delete of members notifies channel `mwa_member` with the ids of the rows it
-- touched (comma-separated), or `*` when there are more than fit one notification (100), so each
-- process can hold the member an `x-on-behalf-of` names (id, status, KYC level) and forget it the
-- moment it changes (src/platform/auth/member-cache.ts). Statement-level triggers with a transition
-- table: one notification per statement, delivered at the commit.
--
-- Triggers (created by migration 027): members_notify_update, members_notify_delete (AFTER UPDATE /
-- AFTER DELETE, REFERENCING OLD TABLE AS changed_members, FOR EACH STATEMENT).
-- History: migration 027 (issue 16, docs/performance.md "Request pipeline and the authenticated
-- read").
CREATE OR REPLACE FUNCTION public.mwa_notify_member_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  n int;
  ids text;
BEGIN
  SELECT count(*), string_agg(id, ',') INTO n, ids FROM (SELECT id FROM changed_members LIMIT 101) t;
  IF n > 0 THEN
    PERFORM pg_notify('mwa_member', CASE WHEN n > 100 THEN '*' ELSE ids END);
  END IF;
  RETURN NULL;
END
$function$
