import { sql, type Kysely } from 'kysely';

/**
 * An operator's custody adjustment (`POST /admin/v1/merchants/{id}/custody-adjustments`) moves a
 * merchant's custody by hand, so why it was made must stay with it: the row its journal entry
 * names (`cad_…`), with the direction and the operator's reason. Before, the required reason was
 * read and dropped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE custody_adjustments (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      merchant_id text NOT NULL REFERENCES merchants(id),
      environment text NOT NULL,
      asset text NOT NULL,
      amount numeric(78,0) NOT NULL CHECK (amount > 0),
      direction text NOT NULL CHECK (direction IN ('increase', 'decrease')),
      reason text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX custody_adjustments_merchant ON custody_adjustments (merchant_id, environment, seq)`.execute(
    db,
  );
}
