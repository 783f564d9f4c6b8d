-- mwa_insert_deposits
--
-- A batch of one merchant's deposits: the members resolved and the rows inserted, as
-- `insertDeposits` (src/modules/deposits/queries.ts) did in its own statement.
--
-- Kept for processes of the release before `mwa_insert_deposits_across` (migration 051) until the
-- release after; the current code calls the `_across` function.
-- History: migration 043 (issue 16, docs/group-commit.md "One statement a batch").
CREATE OR REPLACE FUNCTION public.mwa_insert_deposits(p_merchant_id text, p_environment text,
    p_created_at timestamp with time zone, p_ids text[], p_member_refs text[], p_assets text[], p_networks text[],
    p_amounts numeric[], p_tx_hashes text[])
 RETURNS TABLE(ord integer, member_found boolean, member_external_id text, deposit deposits)
 LANGUAGE plpgsql
AS $function$
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
            SELECT mm.id, mm.external_member_id, mm.status, mm.merchant_id, mm.environment FROM members mm WHERE mm.id =
              i.member_ref OFFSET 0
          ) by_id
          WHERE by_id.merchant_id = p_merchant_id AND by_id.environment = p_environment
          UNION ALL
          SELECT mm.id, mm.external_member_id, mm.status, 2 FROM members mm
          WHERE mm.external_member_id = i.member_ref AND mm.merchant_id = p_merchant_id AND mm.environment =
            p_environment
        ) c ORDER BY c.preference LIMIT 1
      ) m ON true
    ),
    inserted AS (
      INSERT INTO deposits AS d (id, merchant_id, environment, member_id, asset, network, amount, tx_hash, status,
        created_at)
      SELECT r.id, p_merchant_id, p_environment, r.member_id, r.asset, r.network, r.amount, r.tx_hash, 'credited',
        p_created_at
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
