import { sql, type Kysely } from 'kysely';

/**
 * Performance (issue 16, docs/performance.md):
 *
 * Every update or delete of a key, a merchant or a token notifies channel `mwa_auth`, so each
 * process can hold token, key and merchant state in memory and forget it the moment it changes
 * (src/platform/auth-cache.ts). Statement-level triggers: one notification per statement, and
 * PostgreSQL folds identical notifications of one transaction into one, delivered at its commit.
 *
 * `mwa_post_entry` posts one balanced entry in one round trip (src/ledger/ledger.ts, `postEntry`):
 * the same steps the ledger ran as five to seven statements, in the same order, so the hot rows
 * (a merchant's custody) are held locked for one statement's time instead of several round trips.
 */
const authTables = ['api_keys', 'merchants', 'access_tokens'];

/**
 * Accounts come as parallel arrays, one element per touched account in key order (the order
 * missing ones are created in); `p_delta` is each one's change of the stored balance. Lines come
 * as the index (1-based) of their account and their signed amount (debit positive). Answers
 * ('ok', null), ('short', i) for the first account (in lock order) the entry would take below
 * zero, ('duplicate', null) when the movement was already posted. Refusals write nothing but
 * empty accounts, as before.
 */
const postEntryFunction = `CREATE FUNCTION mwa_post_entry(
  p_entry_id text, p_environment text, p_kind text, p_reference_type text, p_reference_id text,
  p_merchant_id text, p_asset text,
  p_owner_type text[], p_owner_id text[], p_bucket text[], p_normal_side text[], p_non_negative boolean[], p_delta numeric[],
  p_line_account int[], p_line_amount numeric[]
) RETURNS TABLE (status text, account_index int) LANGUAGE plpgsql AS $$
DECLARE
  n int := array_length(p_owner_type, 1);
  ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  acc record;
  i int;
  inserted text;
BEGIN
  INSERT INTO ledger_accounts (environment, owner_type, owner_id, asset, bucket, normal_side, non_negative)
  SELECT p_environment, t.owner_type, t.owner_id, p_asset, t.bucket, t.normal_side, t.non_negative
  FROM unnest(p_owner_type, p_owner_id, p_bucket, p_normal_side, p_non_negative) WITH ORDINALITY
       AS t(owner_type, owner_id, bucket, normal_side, non_negative, ord)
  WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.environment = p_environment AND a.asset = p_asset
                      AND a.owner_type = t.owner_type AND a.owner_id = t.owner_id AND a.bucket = t.bucket)
  ORDER BY t.ord
  ON CONFLICT (environment, owner_type, owner_id, asset, bucket) DO NOTHING;

  FOR acc IN
    SELECT a.id, a.balance, a.normal_side, a.non_negative, t.ord::int AS ord
    FROM ledger_accounts a
    JOIN unnest(p_owner_type, p_owner_id, p_bucket) WITH ORDINALITY AS t(owner_type, owner_id, bucket, ord)
      ON a.owner_type = t.owner_type AND a.owner_id = t.owner_id AND a.bucket = t.bucket
    WHERE a.environment = p_environment AND a.asset = p_asset
    ORDER BY a.id
    FOR UPDATE OF a
  LOOP
    IF acc.normal_side <> p_normal_side[acc.ord] OR acc.non_negative <> p_non_negative[acc.ord] THEN
      RAISE EXCEPTION 'ledger: account % rules differ from its reference', acc.id;
    END IF;
    ids[acc.ord] := acc.id;
    IF acc.non_negative AND acc.balance + p_delta[acc.ord] < 0 THEN
      IF EXISTS (SELECT 1 FROM journal_entries e WHERE e.environment = p_environment AND e.reference_type = p_reference_type
                   AND e.reference_id = p_reference_id AND e.kind = p_kind) THEN
        RETURN QUERY SELECT 'duplicate'::text, NULL::int;
      ELSE
        RETURN QUERY SELECT 'short'::text, acc.ord;
      END IF;
      RETURN;
    END IF;
  END LOOP;
  FOR i IN 1..n LOOP
    IF ids[i] IS NULL THEN RAISE EXCEPTION 'ledger: account % of the entry was not locked', i; END IF;
  END LOOP;

  INSERT INTO journal_entries (id, environment, kind, reference_type, reference_id, merchant_id, asset)
  VALUES (p_entry_id, p_environment, p_kind, p_reference_type, p_reference_id, p_merchant_id, p_asset)
  ON CONFLICT (environment, reference_type, reference_id, kind) DO NOTHING
  RETURNING id INTO inserted;
  IF inserted IS NULL THEN
    RETURN QUERY SELECT 'duplicate'::text, NULL::int;
    RETURN;
  END IF;

  UPDATE ledger_accounts a SET balance = a.balance + d.delta
  FROM unnest(ids, p_delta) AS d(id, delta)
  WHERE a.id = d.id AND d.delta <> 0;

  INSERT INTO postings (entry_id, account_id, asset, amount)
  SELECT p_entry_id, ids[l.account], p_asset, l.amount
  FROM unnest(p_line_account, p_line_amount) WITH ORDINALITY AS l(account, amount, ord)
  ORDER BY l.ord;

  RETURN QUERY SELECT 'ok'::text, NULL::int;
END
$$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(postEntryFunction).execute(db);
  await sql
    .raw(
      `CREATE FUNCTION mwa_notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('mwa_auth', TG_TABLE_NAME);
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  for (const table of authTables) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_notify_auth_change AFTER UPDATE OR DELETE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION mwa_notify_auth_change()`,
      )
      .execute(db);
  }
}
