import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Recovery codes of the console's second factor (docs/console.md "Recovery codes"): one row per
 * code of a user's current set, kept only as a SHA-256 hash (of the user id and the code: 80
 * random bits, so the hash cannot be reversed by guessing). `used_at` is set once, by a
 * conditional update: a code signs in once. A new set deletes the old one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE console_recovery_codes (
      user_id text NOT NULL REFERENCES console_users (id),
      code_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      used_at timestamptz,
      PRIMARY KEY (user_id, code_hash)
    );
  `,
  );
}
