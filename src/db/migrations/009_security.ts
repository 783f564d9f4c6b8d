import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Tokens die with a stop of their key for good (docs/authentication.md): a key's token generation
 * moves on every stop (disable, or a change while it is disabled or expired), and a token is valid
 * only while it carries its key's current generation. Re-enabling a key does not revive old tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE api_keys ADD COLUMN token_generation integer NOT NULL DEFAULT 0;
    ALTER TABLE access_tokens ADD COLUMN key_generation integer NOT NULL DEFAULT 0;
  `,
  );
}
