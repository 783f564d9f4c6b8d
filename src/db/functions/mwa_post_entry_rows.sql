-- mwa_post_entry_rows
--
-- Posts one balanced entry in one round trip: the steps the ledger ran as five to seven
-- statements, in the same order, so the hot rows (a merchant's custody) are held locked for one
-- statement's time instead of several round trips. Called by `mwa_post_entry` after the merchant's
-- write lock.
--
-- Accounts come as parallel arrays, one element per touched account in key order (the order
-- missing ones are created in); `p_delta` is each one's change of the stored balance. Lines come
-- as the index (1-based) of their account and their signed amount (debit positive). Answers
-- ('ok', null), ('short', i) for the first account (in lock order) the entry would take below
-- zero, ('duplicate', null) when the movement was already posted. Refusals write nothing but
-- empty accounts. An account whose stored rules differ from the caller's raises before any
-- shortfall is told (a programming error either way). The accounts are found, created and locked
-- by `mwa_lock_accounts`, and their balances updated one account at a time, by id, so that no
-- generic plan made while `ledger_accounts` was small filters a whole environment.
--
-- History: migration 024 (`mwa_post_entry`, issue 16), renamed `mwa_post_entry_rows` by 031,
-- replaced by 034 (look-ups by the whole key or by id).
CREATE OR REPLACE FUNCTION public.mwa_post_entry_rows(p_entry_id text, p_environment text, p_kind text,
    p_reference_type text, p_reference_id text, p_merchant_id text, p_asset text, p_owner_type text[],
    p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[], p_delta numeric[],
    p_line_account integer[], p_line_amount numeric[])
 RETURNS TABLE(status text, account_index integer)
 LANGUAGE plpgsql
AS $function$
DECLARE
  n int := array_length(p_owner_type, 1);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  acc record;
  i int;
  inserted text;
BEGIN
  FOR acc IN SELECT * FROM mwa_lock_accounts(p_environment, array_fill(p_asset, ARRAY[n]), p_owner_type, p_owner_id,
    p_bucket, p_normal_side, p_non_negative) LOOP
    ids[acc.ord] := acc.id;
    IF p_non_negative[acc.ord] AND acc.balance + p_delta[acc.ord] < 0 THEN
      IF EXISTS (SELECT 1 FROM journal_entries e WHERE e.environment = p_environment AND e.reference_type =
        p_reference_type
                   AND e.reference_id = p_reference_id AND e.kind = p_kind) THEN
        RETURN QUERY SELECT 'duplicate'::text, NULL::int;
      ELSE
        RETURN QUERY SELECT 'short'::text, acc.ord;
      END IF;
      RETURN;
    END IF;
  END LOOP;

  INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
  VALUES (p_entry_id, p_environment, p_kind, p_reference_type, p_reference_id, p_merchant_id, p_asset)
  ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
  RETURNING id INTO inserted;
  IF inserted IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, NULL::int;
    RETURN;
  END IF;

  FOR i IN 1..n LOOP
    IF p_delta[i] <> 0 THEN
      UPDATE ledger_accounts SET balance = balance + p_delta[i] WHERE id = ids[i];
    END IF;
  END LOOP;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id, ids[l.account], p_asset, l.amount
  FROM unnest(p_line_account, p_line_amount) WITH ORDINALITY AS l(account, amount, ord)
  ORDER BY l.ord;

  RETURN QUERY SELECT 'ok'::text, NULL::int;
END
$function$
