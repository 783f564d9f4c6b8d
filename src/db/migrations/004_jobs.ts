import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    -- Background jobs: claimed with FOR UPDATE SKIP LOCKED under a lease, so several processes
    -- share the queue and a job whose process died is picked up again when its lease ends.
    CREATE TABLE jobs (
      id bigserial PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}',
      dedupe_key text UNIQUE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dead')),
      run_at timestamptz NOT NULL DEFAULT now(),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL DEFAULT 10,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX jobs_due ON jobs (status, run_at);
  `,
  );
}
