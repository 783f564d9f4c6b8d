import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE merchants (
      id text PRIMARY KEY,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    -- The merchant as a principal of one environment; the sandbox one appears at the first sandbox token exchange.
    CREATE TABLE merchant_principals (
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment)
    );

    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      client_id text NOT NULL UNIQUE,
      api_key_hash text NOT NULL,
      signing_key text NOT NULL,
      scopes jsonb NOT NULL DEFAULT '[]',
      pending_scopes jsonb NOT NULL DEFAULT '[]',
      ip_allowlist text NOT NULL DEFAULT '',
      disabled boolean NOT NULL DEFAULT false,
      expires_at timestamptz,
      rotated_from text REFERENCES api_keys(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_keys_merchant ON api_keys (merchant_id);

    CREATE TABLE access_tokens (
      token_hash text PRIMARY KEY,
      key_id text NOT NULL REFERENCES api_keys(id),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX access_tokens_expiry ON access_tokens (expires_at);

    CREATE TABLE idempotency_keys (
      merchant_id text NOT NULL,
      environment text NOT NULL,
      key text NOT NULL,
      endpoint text NOT NULL,
      request_hash text NOT NULL,
      status_code integer NOT NULL,
      response_body text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment, key)
    );
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

    CREATE TABLE signature_nonces (
      merchant_id text NOT NULL,
      environment text NOT NULL,
      nonce text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (merchant_id, environment, nonce)
    );
    CREATE INDEX signature_nonces_expiry ON signature_nonces (expires_at);

    -- Sliding-window rate limits: one counter per fixed minute, weighted with the previous minute.
    CREATE TABLE rate_limit_windows (
      subject text NOT NULL,
      bucket text NOT NULL,
      window_start bigint NOT NULL,
      hits integer NOT NULL,
      PRIMARY KEY (subject, bucket, window_start)
    );

    CREATE TABLE api_call_logs (
      id bigserial PRIMARY KEY,
      merchant_id text NOT NULL,
      environment text NOT NULL,
      request_id text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      status_code integer NOT NULL,
      duration_ms integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_call_logs_merchant ON api_call_logs (merchant_id, environment, id);

    CREATE TABLE members (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      external_member_id text NOT NULL,
      status text NOT NULL DEFAULT 'active',
      kyc_level integer NOT NULL DEFAULT 0,
      profile jsonb NOT NULL DEFAULT '{}',
      sessions_revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (merchant_id, environment, external_member_id)
    );
  `,
  );
}
