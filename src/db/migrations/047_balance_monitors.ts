import { sql, type Kysely } from 'kysely';
import { applyStoredFunction } from '../stored-functions.js';

/**
 * Balance monitors (issue 41, point 4; docs/ledger.md "Balance monitors"): a merchant's watch on
 * its prepaid or custody balance of one asset, `below` in minor units. The check belongs to the
 * ledger and runs in the database: a trigger on the merchant's custody and prepaid accounts,
 * after each change of the balance, in the transaction of the posting that changed it. Every
 * posting holds the account row (and the merchant's write lock) from its statement to its commit,
 * so the changes of one account run one after the other and each sees the state the previous
 * left: a monitor `ok` whose balance is now below `below` becomes `triggered` and writes one
 * `balance_monitor.triggered` event; a `triggered` one back at or above becomes `ok` and writes
 * one `balance_monitor.resolved`. Every path that posts (one entry, many, a deposit batch)
 * updates the balance, so none can miss it, and no module is imported by the ledger.
 * `status_version` of the events counts the monitor's changes of state.
 *
 * The trigger's function lives in src/db/functions/ (docs/stored-functions.md), its only source.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE balance_monitors (
      id text PRIMARY KEY,
      seq bigserial UNIQUE,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      balance text NOT NULL CHECK (balance IN ('prepaid', 'custody')),
      asset text NOT NULL REFERENCES assets(code),
      below numeric(78,0) NOT NULL CHECK (below > 0),
      state text NOT NULL CHECK (state IN ('ok', 'triggered')),
      changes integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL
    )
  `.execute(db);
  await sql`CREATE INDEX balance_monitors_account
    ON balance_monitors (merchant_id, environment, asset, balance)`.execute(db);
  await sql`CREATE INDEX balance_monitors_merchant ON balance_monitors (merchant_id, environment, seq)`.execute(db);
  await applyStoredFunction(db, 'mwa_balance_monitors.sql');
  await sql`
    CREATE TRIGGER ledger_accounts_monitors AFTER UPDATE OF balance ON ledger_accounts FOR EACH ROW
    WHEN (NEW.owner_type = 'merchant' AND NEW.bucket IN ('custody', 'prepaid')
      AND OLD.balance IS DISTINCT FROM NEW.balance)
    EXECUTE FUNCTION mwa_balance_monitors()
  `.execute(db);
}
