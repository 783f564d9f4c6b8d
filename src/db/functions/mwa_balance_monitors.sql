-- mwa_balance_monitors
--
-- Balance monitors (docs/ledger.md "Balance monitors"): a merchant's watch on its prepaid or
-- custody balance of one asset, `below` in minor units. The check belongs to the ledger and runs
-- in the database: a trigger on the merchant's custody and prepaid accounts, after each change of
-- the balance, in the transaction of the posting that changed it. Every posting holds the account
-- row (and the merchant's write lock) from its statement to its commit, so the changes of one
-- account run one after the other and each sees the state the previous left: a monitor `ok` whose
-- balance is now below `below` becomes `triggered` and writes one `balance_monitor.triggered`
-- event; a `triggered` one back at or above becomes `ok` and writes one
-- `balance_monitor.resolved`. Every path that posts (one entry, many, a batch) updates the balance,
-- so none can miss it, and no module is imported by the ledger. `status_version` of the events
-- counts the monitor's changes of state.
--
-- Trigger (created by migration 047): ledger_accounts_monitors (AFTER UPDATE OF balance ON
-- ledger_accounts, FOR EACH ROW, WHEN the account is a merchant's custody or prepaid one and its
-- balance changed).
-- History: migration 047 (issue 41, point 4).
CREATE OR REPLACE FUNCTION public.mwa_balance_monitors()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      m record;
      next_state text;
    BEGIN
      FOR m IN SELECT * FROM balance_monitors b
               WHERE b.merchant_id = NEW.owner_id AND b.environment = NEW.environment AND b.asset = NEW.asset AND
                 b.balance = NEW.bucket
               ORDER BY b.id FOR UPDATE LOOP
        next_state := CASE WHEN NEW.balance < m.below THEN 'triggered' ELSE 'ok' END;
        CONTINUE WHEN next_state = m.state;
        UPDATE balance_monitors SET state = next_state, changes = changes + 1 WHERE id = m.id;
        INSERT INTO events (id, merchant_id, environment, type, object, object_id, external_member_id, status,
          status_version, livemode, created_at)
        VALUES ('evt_' || gen_random_uuid(), m.merchant_id, m.environment,
                CASE WHEN next_state = 'triggered' THEN 'balance_monitor.triggered' ELSE 'balance_monitor.resolved' END,
                'balance_monitor', m.id, '', next_state, m.changes + 1, m.environment = 'production',
                now() + COALESCE((SELECT sc.offset_ms FROM sandbox_clocks sc WHERE sc.merchant_id = m.merchant_id AND
                  m.environment = 'sandbox'), 0)
                  * interval '1 millisecond');
      END LOOP;
      RETURN NULL;
    END
    $function$
