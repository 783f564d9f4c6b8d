import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Strong authentication (step-up; docs/step-up.md). Challenges are hosted-screen tickets
 * (migration 012); this adds:
 * - `step_up_thresholds`: per merchant, environment, action and asset, the amount (minor units)
 *   at or above which the action needs step-up; no row, no step-up. Set by the operator.
 * - `upstream_sim_notifications`: the notifier simulator's own books (the "phone" of each
 *   member): one-time codes as delivered, for tests and operators. A real notifier keeps nothing
 *   here; the service itself keeps only the code's hash (`hosted_tickets.secret_hash`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE step_up_thresholds (
      merchant_id text NOT NULL REFERENCES merchants (id),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      action text NOT NULL,
      asset text NOT NULL REFERENCES assets (code),
      min_amount numeric(78,0) NOT NULL CHECK (min_amount >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, environment, action, asset)
    );

    CREATE TABLE upstream_sim_notifications (
      id bigserial PRIMARY KEY,
      merchant_id text NOT NULL,
      environment text NOT NULL,
      member_id text NOT NULL,
      reference text NOT NULL,
      code text NOT NULL,
      message text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX upstream_sim_notifications_member ON upstream_sim_notifications (member_id, id);
  `,
  );
}
