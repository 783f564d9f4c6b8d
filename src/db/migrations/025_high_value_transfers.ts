import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * High-value transfers (docs/kyc.md): per environment and asset, the amount (minor units) at or
 * above which a withdrawal or a remittance is a high-value transfer and needs the KYC level of the
 * `high_value_transfer` requirement. No row: no amount of that asset is high-value. Set by the
 * operator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE kyc_high_value_thresholds (
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      asset text NOT NULL REFERENCES assets (code),
      min_amount numeric(78,0) NOT NULL CHECK (min_amount > 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (environment, asset)
    );
  `,
  );
}
