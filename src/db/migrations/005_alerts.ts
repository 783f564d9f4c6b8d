import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    -- Things an operator must look at: an order in a state outside our enumeration, an endpoint
    -- failing for days, a reconciliation that cannot conclude.
    CREATE TABLE operator_alerts (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      kind text NOT NULL,
      merchant_id text,
      environment text,
      object text NOT NULL DEFAULT '',
      object_id text NOT NULL DEFAULT '',
      message text NOT NULL,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX operator_alerts_open ON operator_alerts (resolved_at, seq);
  `,
  );
}
