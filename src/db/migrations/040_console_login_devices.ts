import { sql, type Kysely } from 'kysely';

/**
 * The sign-in throttle tells known browsers from the rest (docs/console.md, "Sign-in throttle"): a
 * failure from a browser with a valid device cookie for the account records the cookie's hash, and
 * counts only against that browser; a failure without one (null) counts against the client
 * address and, for 24 hours, against the account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE console_login_failures ADD COLUMN device_hash text`.execute(db);
  await sql`CREATE INDEX console_login_failures_device ON console_login_failures (device_hash, failed_at)
    WHERE device_hash IS NOT NULL`.execute(db);
}
