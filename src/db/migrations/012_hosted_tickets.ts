import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/** Hosted-screen tickets and step-up challenges (extensions 9; src/modules/hosted-screens). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE hosted_tickets (
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL,
      member_id text NOT NULL REFERENCES members (id),
      purpose text NOT NULL,
      subject_id text,
      action text,
      object_ref text,
      status text NOT NULL DEFAULT 'open',
      outcome text,
      public_origin text NOT NULL,
      expires_at timestamptz NOT NULL,
      failed_attempts integer NOT NULL DEFAULT 0,
      secret_hash text,
      completed_at timestamptz,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX hosted_tickets_member ON hosted_tickets (member_id, status);
  `,
  );
}
