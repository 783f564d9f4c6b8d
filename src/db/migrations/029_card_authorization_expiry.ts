import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card money gaps (docs/cards.md "Transactions"): an authorisation's hold may be released in part
 * (`reversed_amount`: what partial reversals and the expiry released of it) and expires when it
 * is neither cleared nor reversed by `expires_at` (merchant clock; 7 days, 30 for lodging, vehicle
 * rental and cruise MCCs, `authorizationHoldDays` in money-rules.ts). A reversal row records why
 * the hold went back (`reversal_reason`: `network`, the network's message, or `expired`, ours).
 * Open authorisations of earlier releases get their expiry from their creation by the same rule.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE card_transactions
      ADD COLUMN reversed_amount numeric(78,0) NOT NULL DEFAULT 0 CHECK (reversed_amount >= 0
        AND reversed_amount <= amount),
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN reversal_reason text CHECK (reversal_reason IN ('network', 'expired'));

    UPDATE card_transactions SET expires_at = created_at + CASE
        WHEN mcc IN ('7011', '7512', '7513', '7519', '4411') OR mcc BETWEEN '3351' AND '3999' THEN interval '30 days'
        ELSE interval '7 days' END
      WHERE type = 'authorization' AND status = 'approved';

    CREATE INDEX card_transactions_expiry ON card_transactions (merchant_id, environment, expires_at)
      WHERE type = 'authorization' AND status = 'approved';
  `,
  );
}
