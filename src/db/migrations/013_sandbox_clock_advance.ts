import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * The sandbox clock moves work (docs/clock.md):
 * - `sandbox_clocks.advance_lease_until`: one `POST /v1/sandbox/clock/advance` of a merchant at a
 *   time, across processes (a lease, because the embedded database has one connection and an
 *   advance runs other transactions while it holds the merchant's clock);
 * - `jobs.clock_merchant_id`: the sandbox merchant whose clock a job's `run_at` is read on (NULL:
 *   real time), so the runner picks a sandbox job when that merchant's time reaches it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    ALTER TABLE sandbox_clocks ADD COLUMN advance_lease_until timestamptz;
    ALTER TABLE jobs ADD COLUMN clock_merchant_id text;
  `,
  );
}
