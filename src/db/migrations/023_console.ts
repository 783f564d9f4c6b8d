import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * The merchant console (docs/console.md):
 * - `console_users`: people of a merchant who sign in to the console, invited by the operator
 *   (e-mail, role); the password as a scrypt hash, set through the invite link (whose token is
 *   kept only as a SHA-256 hash, with its expiry); the optional TOTP second factor's secret,
 *   sealed (AES-256-GCM), with the last step used (a code is good once).
 * - `console_sessions`: one row per signed-in browser; the cookie's value is kept only as its
 *   SHA-256 hash. Idle and absolute timeouts are checked against `last_seen_at` and `created_at`.
 * - `console_login_failures`: failed sign-ins by e-mail and by client address, counted in a
 *   sliding window (the rate limit of the sign-in form), shared by every process.
 * - `console_audit`: every change made through the console, with the user who made it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE console_users (
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants (id),
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
      status text NOT NULL CHECK (status IN ('invited', 'active', 'disabled')),
      password_hash text,
      invite_token_hash text,
      invite_expires_at timestamptz,
      totp_secret text,
      totp_pending_secret text,
      totp_last_step bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX console_users_email ON console_users (email);
    CREATE UNIQUE INDEX console_users_invite ON console_users (invite_token_hash) WHERE invite_token_hash IS NOT NULL;
    CREATE INDEX console_users_merchant ON console_users (merchant_id);

    CREATE TABLE console_sessions (
      token_hash text PRIMARY KEY,
      user_id text NOT NULL REFERENCES console_users (id),
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL
    );
    CREATE INDEX console_sessions_user ON console_sessions (user_id);

    CREATE TABLE console_login_failures (
      id bigserial PRIMARY KEY,
      email text NOT NULL,
      client_ip text NOT NULL,
      failed_at timestamptz NOT NULL
    );
    CREATE INDEX console_login_failures_email ON console_login_failures (email, failed_at);
    CREATE INDEX console_login_failures_ip ON console_login_failures (client_ip, failed_at);

    CREATE TABLE console_audit (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      user_id text NOT NULL REFERENCES console_users (id),
      user_email text NOT NULL,
      action text NOT NULL,
      object_id text NOT NULL DEFAULT '',
      detail text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL
    );
    CREATE INDEX console_audit_merchant ON console_audit (merchant_id, seq);
  `,
  );
}
