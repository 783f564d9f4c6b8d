import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE deposits (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      member_id text NOT NULL REFERENCES members(id),
      asset text NOT NULL,
      network text,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      tx_hash text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (merchant_id, environment, asset, tx_hash)
    );
    CREATE INDEX deposits_member ON deposits (member_id, seq);

    CREATE TABLE withdrawals (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      member_id text NOT NULL REFERENCES members(id),
      asset text NOT NULL,
      network text NOT NULL,
      address text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      fee numeric(78,0) NOT NULL CHECK (fee >= 0),
      status text NOT NULL CHECK (status IN ('locked', 'settled', 'failed')),
      status_version integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX withdrawals_merchant ON withdrawals (merchant_id, environment, seq);
    CREATE INDEX withdrawals_member ON withdrawals (member_id, seq);

    -- Addresses a withdrawal may never go to: the operator's blacklist.
    CREATE TABLE blacklisted_addresses (
      network text NOT NULL,
      address text NOT NULL,
      reason text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (network, address)
    );

    -- The service's own deposit addresses (handed out by the chain upstream): never a withdrawal target.
    CREATE TABLE deposit_addresses (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      asset text NOT NULL,
      network text NOT NULL,
      address text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (network, address)
    );

    CREATE TABLE prepaid_credits (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      asset text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `,
  );
}
