import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card issuing I, the three unknown outcomes (docs/cards.md, "Reconciliation"): the re-query
 * schedule of applications whose submission outcome is unknown and of merchant-rule sets left
 * unconfirmed after a 502 (times on the merchant's clock, so the sandbox clock drives them), and
 * the one activation attempt of a card whose issuer answer was lost (a digest of idempotency key,
 * body hash and step-up challenge: nothing of the PIN, nothing in clear).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE card_applications
      ADD COLUMN check_count integer NOT NULL DEFAULT 0,
      ADD COLUMN next_check_at timestamptz;
    CREATE INDEX card_applications_check_due ON card_applications (merchant_id, environment, next_check_at)
      WHERE status = 'pending' AND upstream_outcome <> 'accepted' AND next_check_at IS NOT NULL;

    ALTER TABLE card_merchant_rules
      ADD COLUMN check_count integer NOT NULL DEFAULT 0,
      ADD COLUMN next_check_at timestamptz;
    CREATE INDEX card_merchant_rules_check_due ON card_merchant_rules (next_check_at) WHERE synced = false;

    ALTER TABLE cards
      ADD COLUMN activation_attempt_ref text,
      ADD COLUMN activation_attempt_at timestamptz;
  `,
  );
}
