import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * The assets catalogue, the double-entry ledger and the events outbox. Amounts are numeric(78,0)
 * counts of minor units (10^-scale of the asset). See docs/ledger.md.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE assets (
      code text PRIMARY KEY CHECK (code ~ '^[A-Z0-9]{2,16}$'),
      scale integer NOT NULL CHECK (scale BETWEEN 0 AND 18),
      type text NOT NULL CHECK (type IN ('crypto', 'fiat')),
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE asset_networks (
      asset text NOT NULL REFERENCES assets(code),
      network text NOT NULL CHECK (network ~ '^[A-Z0-9_]{2,32}$'),
      enabled boolean NOT NULL DEFAULT true,
      withdrawal_fee numeric(78,0) NOT NULL DEFAULT 0 CHECK (withdrawal_fee >= 0),
      withdrawal_min numeric(78,0) NOT NULL DEFAULT 0 CHECK (withdrawal_min >= 0),
      address_pattern text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (asset, network)
    );

    -- Default catalogue (docs/ledger.md). Fees and minimums in minor units of the asset.
    INSERT INTO assets (code, scale, type) VALUES
      ('USDT', 6, 'crypto'), ('USDC', 6, 'crypto'), ('BTC', 8, 'crypto'), ('ETH', 18, 'crypto'),
      ('USD', 2, 'fiat'), ('EUR', 2, 'fiat'), ('GBP', 2, 'fiat'), ('SGD', 2, 'fiat'), ('HKD', 2, 'fiat');

    INSERT INTO asset_networks (asset, network, withdrawal_fee, withdrawal_min, address_pattern) VALUES
      ('USDT', 'TRON', 1000000, 1000000, '^T[1-9A-HJ-NP-Za-km-z]{33}$'),
      ('USDT', 'ETHEREUM', 5000000, 10000000, '^0x[0-9a-fA-F]{40}$'),
      ('USDC', 'ETHEREUM', 5000000, 10000000, '^0x[0-9a-fA-F]{40}$'),
      ('BTC', 'BITCOIN', 10000, 50000, '^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$'),
      ('ETH', 'ETHEREUM', 2000000000000000, 10000000000000000, '^0x[0-9a-fA-F]{40}$');

    -- One account per (environment, owner, asset, bucket). The balance is signed by the normal
    -- side; member and merchant accounts may never be negative, and the database refuses it.
    CREATE TABLE ledger_accounts (
      id bigserial PRIMARY KEY,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      owner_type text NOT NULL CHECK (owner_type IN ('member', 'merchant', 'platform')),
      owner_id text NOT NULL,
      asset text NOT NULL REFERENCES assets(code),
      bucket text NOT NULL,
      normal_side text NOT NULL CHECK (normal_side IN ('debit', 'credit')),
      balance numeric(78,0) NOT NULL DEFAULT 0,
      non_negative boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (environment, owner_type, owner_id, asset, bucket),
      CHECK ((owner_type = 'platform') = (owner_id = '')),
      CONSTRAINT ledger_accounts_non_negative CHECK (NOT non_negative OR balance >= 0)
    );

    -- One entry per movement; an order's movement of a given kind posts once.
    CREATE TABLE journal_entries (
      id text PRIMARY KEY,
      seq bigserial UNIQUE,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      kind text NOT NULL CHECK (kind <> ''),
      reference_type text NOT NULL CHECK (reference_type <> ''),
      reference_id text NOT NULL CHECK (reference_id <> ''),
      merchant_id text,
      asset text NOT NULL REFERENCES assets(code),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (environment, reference_type, reference_id, kind)
    );

    CREATE TABLE postings (
      id bigserial PRIMARY KEY,
      entry_id text NOT NULL REFERENCES journal_entries(id),
      account_id bigint NOT NULL REFERENCES ledger_accounts(id),
      asset text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount <> 0)
    );
    CREATE INDEX postings_entry ON postings (entry_id);
    CREATE INDEX postings_account ON postings (account_id);

    -- The outbox: written in the transaction of each state change, delivered later.
    CREATE TABLE events (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      type text NOT NULL,
      object text NOT NULL,
      object_id text NOT NULL,
      external_member_id text NOT NULL DEFAULT '',
      status text NOT NULL,
      status_version integer NOT NULL DEFAULT 0,
      livemode boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX events_merchant ON events (merchant_id, environment, seq);
  `,
  );
}
