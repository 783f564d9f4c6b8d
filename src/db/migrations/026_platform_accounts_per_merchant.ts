import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Platform accounts per merchant (issue 16, docs/ledger.md "Platform accounts per merchant"):
 * a platform account (`owner_type` 'platform': fee_income, prepaid_funding, settlement_clearing,
 * earn_interest) is kept per merchant from now on, stored with `owner_id` = the merchant's id, so
 * no row is locked by the entries of every merchant. Until now the check of migration 002 made
 * `owner_id` '' for platform rows and only for them; it becomes: a member or merchant row has an
 * owner id, a platform row may have one (the merchant it is kept for) or '' (the shared row of
 * before this migration).
 *
 * Nothing else changes: `mwa_post_entry` (migration 024) takes the owner ids from the caller and
 * assumes none; the unique key (environment, owner_type, owner_id, asset, bucket) already finds a
 * merchant's platform row. The shared rows, their balances and their postings stay as they are
 * (history is not rewritten): readers sum them with the per-merchant rows, and the custody check
 * attributes their postings by the entry's merchant as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_check;
    ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_owner_id CHECK (owner_type = 'platform'
      OR owner_id <> '');
  `,
  );
}
