import { Migrator, sql, type Migration, type MigrationProvider, type Kysely } from 'kysely';
import * as m001 from './migrations/001_platform.js';
import * as m002 from './migrations/002_ledger.js';
import * as m003 from './migrations/003_money_flows.js';
import * as m004 from './migrations/004_jobs.js';
import * as m005 from './migrations/005_alerts.js';
import * as m006 from './migrations/006_webhooks.js';
import * as m007 from './migrations/007_upstreams_qrpay.js';
import * as m008 from './migrations/008_unlogged_rate_windows.js';
import * as m009 from './migrations/009_security.js';
import * as m010 from './migrations/010_merchant_fees_and_deposit_reads.js';
import * as m011 from './migrations/011_sandbox_clock.js';
import * as m012 from './migrations/012_hosted_tickets.js';
import * as m013 from './migrations/013_sandbox_clock_advance.js';
import * as m014 from './migrations/014_kyc_hosted_screens.js';
import * as m015 from './migrations/015_step_up.js';
import * as m016 from './migrations/016_remittance.js';
import * as m017 from './migrations/017_exchange_earn.js';
import * as m018 from './migrations/018_cards.js';
import * as m019 from './migrations/019_card_controls.js';
import * as m020 from './migrations/020_card_reconcile.js';
import * as m021 from './migrations/021_card_money.js';
import * as m022 from './migrations/022_card_lifecycle.js';
import * as m023 from './migrations/023_console.js';
import * as m024 from './migrations/024_performance.js';
import * as m025 from './migrations/025_high_value_transfers.js';
import * as m026 from './migrations/026_platform_accounts_per_merchant.js';
import * as m027 from './migrations/027_member_notifications.js';
import * as m029 from './migrations/029_card_authorization_expiry.js';
import * as m030 from './migrations/030_console_recovery_codes.js';
import * as m031 from './migrations/031_merchant_posting_lock.js';
import * as m032 from './migrations/032_post_entries.js';
import * as m033 from './migrations/033_claim_keys.js';
import * as m034 from './migrations/034_postings_by_key.js';
import * as m035 from './migrations/035_hex_address_lookup.js';
import * as m036 from './migrations/036_remittance_return_watch.js';
import * as m037 from './migrations/037_deposit_tx_key.js';
import * as m038 from './migrations/038_deposit_tx_key_prefix.js';
import * as m039 from './migrations/039_custody_adjustments.js';
import * as m040 from './migrations/040_console_login_devices.js';
import * as m041 from './migrations/041_payee_public_ids.js';
import * as m042 from './migrations/042_console_sign_in_generation.js';
import * as m043 from './migrations/043_deposit_batch.js';
import * as m044 from './migrations/044_webhook_endpoint_changes.js';
import * as m045 from './migrations/045_ledger_as_of.js';
import * as m046 from './migrations/046_events_api.js';
import * as m047 from './migrations/047_balance_monitors.js';
import * as m048 from './migrations/048_exports.js';
import * as m049 from './migrations/049_members_merchant_seq_dropped.js';
import * as m050 from './migrations/050_merchant_branding.js';
import * as m051 from './migrations/051_writes_across_merchants.js';
import * as m052 from './migrations/052_single_merchant_batch_functions_dropped.js';
import * as m053 from './migrations/053_webhook_fan_out_queue.js';
import * as m054 from './migrations/054_remit_orders_daily_per_merchant.js';
import * as m055 from './migrations/055_post_entries_requires.js';
import { applyStoredFunctions } from './stored-functions.js';

// Migrations are listed here, in order, so a bundled or compiled build finds them without a file scan.
const migrations: Record<string, Migration> = {
  '001_platform': m001,
  '002_ledger': m002,
  '003_money_flows': m003,
  '004_jobs': m004,
  '005_alerts': m005,
  '006_webhooks': m006,
  '007_upstreams_qrpay': m007,
  '008_unlogged_rate_windows': m008,
  '009_security': m009,
  '010_merchant_fees_and_deposit_reads': m010,
  '011_sandbox_clock': m011,
  '012_hosted_tickets': m012,
  '013_sandbox_clock_advance': m013,
  '014_kyc_hosted_screens': m014,
  '015_step_up': m015,
  '016_remittance': m016,
  '017_exchange_earn': m017,
  '018_cards': m018,
  '019_card_controls': m019,
  '020_card_reconcile': m020,
  '021_card_money': m021,
  '022_card_lifecycle': m022,
  '023_console': m023,
  '024_performance': m024,
  '025_high_value_transfers': m025,
  '026_platform_accounts_per_merchant': m026,
  '027_member_notifications': m027,
  '029_card_authorization_expiry': m029,
  '030_console_recovery_codes': m030,
  '031_merchant_posting_lock': m031,
  '032_post_entries': m032,
  '033_claim_keys': m033,
  '034_postings_by_key': m034,
  '035_hex_address_lookup': m035,
  '036_remittance_return_watch': m036,
  '037_deposit_tx_key': m037,
  '038_deposit_tx_key_prefix': m038,
  '039_custody_adjustments': m039,
  '040_console_login_devices': m040,
  '041_payee_public_ids': m041,
  '042_console_sign_in_generation': m042,
  '043_deposit_batch': m043,
  '044_webhook_endpoint_changes': m044,
  '045_ledger_as_of': m045,
  '046_events_api': m046,
  '047_balance_monitors': m047,
  '048_exports': m048,
  '049_members_merchant_seq_dropped': m049,
  '050_merchant_branding': m050,
  '051_writes_across_merchants': m051,
  '052_single_merchant_batch_functions_dropped': m052,
  '053_webhook_fan_out_queue': m053,
  '054_remit_orders_daily_per_merchant': m054,
  '055_post_entries_requires': m055,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

/**
 * Whether the database has run exactly the migrations listed here: then the Migrator has nothing
 * to do. It would find that out through Kysely's introspection (every table and column, twice),
 * ~0.1 s of CPU at each start on an embedded database; two small queries do. Anything else
 * (no table yet, a migration missing or unknown) goes to the Migrator, which runs or refuses.
 */
async function upToDate(db: Kysely<any>): Promise<boolean> {
  const { rows: table } = await sql<{
    present: boolean;
  }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(db);
  if (!table[0]?.present) return false;
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
  const applied = rows.map((r) => r.name).sort();
  const listed = Object.keys(migrations).sort();
  return applied.length === listed.length && applied.every((name, i) => name === listed[i]);
}

/**
 * Runs the migrations not yet run, then makes every stored function what its file in
 * src/db/functions/ says (stored-functions.ts; docs/stored-functions.md): migrations change the
 * schema, the files are the functions' only source. Answers how many migrations ran (0: the
 * schema was up to date).
 */
export async function migrateToLatest(db: Kysely<any>): Promise<number> {
  const ran = await runMigrations(db);
  await applyStoredFunctions(db);
  return ran;
}

async function runMigrations(db: Kysely<any>): Promise<number> {
  if (await upToDate(db)) return 0;
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration failed: ${failed?.migrationName ?? ''} ${String(error)}`);
  }
  return results?.filter((r) => r.status === 'Success').length ?? 0;
}
