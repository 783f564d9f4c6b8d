-- mwa_insert_deposits_across
--
-- A batch's deposits, of any merchants: the members resolved and the rows inserted, each deposit
-- with its merchant and environment and created at its own merchant's time (the sandbox clock's
-- offset).
--
-- Group commit across merchants (issue 37, docs/write-model.md): a batch holds the writes of many
-- merchants, so the statements it shares take one list of merchants and environments instead of
-- one of each.
--
-- Runs with `plan_cache_mode = force_generic_plan` (docs/group-commit.md): PostgreSQL otherwise
-- judged the generic plan of a statement over a batch's arrays dearer than a custom one and
-- planned it anew on every call. Every statement in it is a look-up by key or by id, so the
-- generic plan is the plan (test/ledger-plans.test.ts).
-- History: migration 051, replacing `mwa_insert_deposits` (043), which migration 052 dropped.
CREATE OR REPLACE FUNCTION public.mwa_insert_deposits_across(p_merchant_ids text[], p_environments text[], p_ids text[],
    p_member_refs text[], p_assets text[], p_networks text[], p_amounts numeric[], p_tx_hashes text[])
 RETURNS TABLE(ord integer, member_found boolean, member_external_id text, deposit deposits)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH input AS (
      SELECT * FROM unnest(p_merchant_ids, p_environments, p_ids, p_member_refs, p_assets, p_networks, p_amounts,
        p_tx_hashes)
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
            SELECT mm.id, mm.external_member_id, mm.status, mm.merchant_id, mm.environment FROM members mm WHERE mm.id =
              i.member_ref OFFSET 0
          ) by_id
          WHERE by_id.merchant_id = i.merchant_id AND by_id.environment = i.environment
          UNION ALL
          SELECT mm.id, mm.external_member_id, mm.status, 2 FROM members mm
          WHERE mm.external_member_id = i.member_ref AND mm.merchant_id = i.merchant_id AND mm.environment =
            i.environment
        ) c ORDER BY c.preference LIMIT 1
      ) m ON true
    ),
    inserted AS (
      INSERT INTO deposits AS d (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status,
        created_at)
      SELECT r.id, r.merchant_id, r.environment, r.member_id, r.asset, r.network, r.amount, r.tx_hash, 'credited',
             now() + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id = r.merchant_id AND
               r.environment = 'sandbox'), 0)
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
$function$
