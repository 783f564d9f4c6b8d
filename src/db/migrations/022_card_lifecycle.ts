import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card issuing II, lifecycle (docs/cards.md, "Replacement, closing and expiry"; src/modules/cards
 * replacements.ts, closing.ts): the replacement and postage fees of a product, the card's freeze,
 * its link to the card it replaces, the closing's issuer call and its reconciliation, and the
 * replacement requests with the executor's progress. A replacement card keeps its lineage's
 * application: `application_id` stays unique only among cards that replace none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE card_products
      ADD COLUMN replacement_fee numeric(78,0) NOT NULL DEFAULT 0 CHECK (replacement_fee >= 0),
      ADD COLUMN postage_fee numeric(78,0) NOT NULL DEFAULT 0 CHECK (postage_fee >= 0);
    UPDATE card_products SET
      replacement_fee = CASE form_factor WHEN 'physical' THEN 1000 ELSE 300 END,
      postage_fee = CASE form_factor WHEN 'physical' THEN 500 ELSE 0 END;

    ALTER TABLE cards
      ADD COLUMN frozen_at timestamptz,
      ADD COLUMN replaces text REFERENCES cards (id),
      ADD COLUMN replaced_by text REFERENCES cards (id),
      ADD COLUMN closing_from text CHECK (closing_from IN ('unactivated', 'active')),
      ADD COLUMN close_outcome text CHECK (close_outcome IN ('pending', 'timeout', 'unknown')),
      ADD COLUMN close_checks integer NOT NULL DEFAULT 0,
      ADD COLUMN close_next_check_at timestamptz,
      ADD COLUMN balance_returned_at timestamptz;
    ALTER TABLE cards DROP CONSTRAINT cards_application_id_key;
    CREATE UNIQUE INDEX cards_application_first ON cards (application_id) WHERE replaces IS NULL;
    CREATE UNIQUE INDEX cards_replaces ON cards (replaces) WHERE replaces IS NOT NULL;
    CREATE INDEX cards_closing_due ON cards (merchant_id, environment, close_next_check_at) WHERE status = 'closing';
    CREATE INDEX cards_expiry ON cards (merchant_id, environment, exp_year, exp_month)
      WHERE status IN ('unactivated', 'active');

    CREATE TABLE card_replacements (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members (id),
      card_id text NOT NULL REFERENCES cards (id),
      reason text NOT NULL CHECK (reason IN ('pan_leaked', 'stolen', 'pin_locked', 'damaged', 'user_request',
        'expiring',
                                             'lost_in_transit', 'not_received', 'production_error', 'name_error')),
      security boolean NOT NULL,
      note text CHECK (char_length(note) <= 200),
      status text NOT NULL CHECK (status IN ('requested', 'processing', 'completed', 'failed')),
      status_version integer NOT NULL,
      step text NOT NULL DEFAULT 'none' CHECK (step IN ('none', 'prepared', 'issued')),
      fee_asset text,
      replacement_fee numeric(78,0) NOT NULL DEFAULT 0 CHECK (replacement_fee >= 0),
      postage_fee numeric(78,0) NOT NULL DEFAULT 0 CHECK (postage_fee >= 0),
      returned_amount numeric(78,0) NOT NULL DEFAULT 0 CHECK (returned_amount >= 0),
      inventory_before text,
      new_card_ref text,
      new_card_last4 text,
      new_card_exp_month integer,
      new_card_exp_year integer,
      new_card_id text REFERENCES cards (id),
      upstream_outcome text NOT NULL DEFAULT 'none' CHECK (upstream_outcome IN ('none', 'timeout', 'unknown')),
      attempts integer NOT NULL DEFAULT 0,
      failure_reason text,
      next_run_at timestamptz NOT NULL,
      lease_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz
    );
    CREATE UNIQUE INDEX card_replacements_in_flight ON card_replacements (card_id)
      WHERE status IN ('requested', 'processing');
    CREATE INDEX card_replacements_card ON card_replacements (card_id, seq);
    CREATE INDEX card_replacements_due ON card_replacements (merchant_id, environment, next_run_at)
      WHERE status IN ('requested', 'processing');
  `,
  );
}
