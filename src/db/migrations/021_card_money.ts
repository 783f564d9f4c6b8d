import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Card issuing II, the money side (docs/cards.md "Card money"; src/modules/cards/topups.ts,
 * transactions.ts): the products' top-up pricing (fee in basis points plus a fixed part in the
 * card currency, and the FX markup over mid that is never disclosed), the top-up orders (the
 * shared order lifecycle's columns, src/upstreams/order-store.ts) and the card transactions
 * (authorisations, clearings, reversals, refunds) with the decline reason recorded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE card_products
      ADD COLUMN topup_fee_bps integer NOT NULL DEFAULT 100 CHECK (topup_fee_bps BETWEEN 0 AND 10000),
      ADD COLUMN topup_fee_fixed numeric(78,0) NOT NULL DEFAULT 0 CHECK (topup_fee_fixed >= 0),
      ADD COLUMN topup_fx_markup_bps integer NOT NULL DEFAULT 50 CHECK (topup_fx_markup_bps BETWEEN 0 AND 10000);

    CREATE TABLE card_topups (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members (id),
      card_id text NOT NULL REFERENCES cards (id),
      source_asset text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      fee numeric(78,0) NOT NULL CHECK (fee >= 0),
      card_currency text NOT NULL,
      arrival_amount numeric(78,0) NOT NULL CHECK (arrival_amount > 0),
      rate text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'suspended', 'credited', 'failed')),
      status_version integer NOT NULL,
      upstream_outcome text NOT NULL CHECK (upstream_outcome IN ('none', 'pending', 'accepted', 'timeout', 'unknown')),
      provider_order_id text,
      provider_status text,
      failure_reason text,
      dispatch_started_at timestamptz,
      check_count integer NOT NULL DEFAULT 0,
      next_check_at timestamptz,
      last_checked_at timestamptz,
      credited_at timestamptz,
      failed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX card_topups_card ON card_topups (card_id, seq);
    CREATE INDEX card_topups_open ON card_topups (next_check_at) WHERE status IN ('processing', 'suspended');

    CREATE TABLE card_transactions (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      member_id text NOT NULL REFERENCES members (id),
      card_id text NOT NULL REFERENCES cards (id),
      type text NOT NULL CHECK (type IN ('authorization', 'clearing', 'reversal', 'refund')),
      status text NOT NULL CHECK (status IN ('approved', 'declined', 'cleared', 'reversed', 'posted')),
      status_version integer NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount >= 0),
      currency text NOT NULL,
      merchant_name text NOT NULL,
      mcc text NOT NULL,
      decline_reason text,
      authorization_id text REFERENCES card_transactions (id),
      cleared_amount numeric(78,0) NOT NULL DEFAULT 0,
      refunded_amount numeric(78,0) NOT NULL DEFAULT 0,
      network_ref text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX card_transactions_card ON card_transactions (card_id, seq);
    CREATE INDEX card_transactions_spend ON card_transactions (card_id, created_at) WHERE type = 'authorization'
      AND status IN ('approved', 'cleared');
  `,
  );
}
