import type { Kysely } from 'kysely';
import { runScript } from '../sql-script.js';

/**
 * Each sandbox merchant's clock (extensions 8): real time plus an offset that
 * `POST /v1/sandbox/clock/advance` only ever increases (src/platform/clock.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(
    db,
    `
    CREATE TABLE sandbox_clocks (
      merchant_id text PRIMARY KEY REFERENCES merchants (id),
      offset_ms bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `,
  );
}
