import { sql, type Kysely } from 'kysely';

/**
 * Completed sign-ins per console user (docs/console.md, "Two-step sign-in"): the cookie that
 * carries a user from the password to the second step is signed with the count it was made at,
 * and every completed sign-in adds one, so the cookie is spent by the sign-in it led to (or by
 * any other) and cannot be presented again within its five minutes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE console_users ADD COLUMN sign_in_generation bigint NOT NULL DEFAULT 0`.execute(db);
}
