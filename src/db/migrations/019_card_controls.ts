import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card issuing I, controls (docs/cards.md; src/modules/cards): the limits as the issuer last
 * confirmed them beside the requested ones (only tightening takes effect when a push fails),
 * the card-level merchant rules with their confirmed baseline, and the log of CVV-unblock calls
 * (the reference's 5 per member per hour, a sliding window in the database).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE cards
      ADD COLUMN limits_version integer NOT NULL DEFAULT 0,
      ADD COLUMN limits_sync text NOT NULL DEFAULT 'synced' CHECK (limits_sync IN ('synced', 'pending', 'failed')),
      ADD COLUMN confirmed_single numeric(78,0) NOT NULL DEFAULT 0,
      ADD COLUMN confirmed_daily numeric(78,0) NOT NULL DEFAULT 0,
      ADD COLUMN confirmed_monthly numeric(78,0) NOT NULL DEFAULT 0;

    CREATE TABLE card_merchant_rules (
      card_id text PRIMARY KEY REFERENCES cards (id),
      rule_type text CHECK (rule_type IN ('white', 'black')),
      merchant_names jsonb NOT NULL,
      mcc_list jsonb NOT NULL,
      synced boolean NOT NULL,
      synced_at timestamptz,
      request_id text NOT NULL,
      confirmed jsonb,
      updated_at timestamptz NOT NULL
    );

    CREATE TABLE card_cvv_unblock_calls (
      id bigserial PRIMARY KEY,
      member_id text NOT NULL REFERENCES members (id),
      called_at timestamptz NOT NULL
    );
    CREATE INDEX card_cvv_unblock_calls_member ON card_cvv_unblock_calls (member_id, called_at);
  `,
  );
}
