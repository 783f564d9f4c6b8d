import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/**
 * Payee ids stop being the link's sequence (src/modules/remittance/payees/payee-ids.ts; docs/remittance.md,
 * "Payee ids"). One row: the installation's key of the permutation, drawn here, once, so that every
 * process and every restart renders the same ids; and the last sequence handed out as a plain
 * number, whose links keep their ids (merchants stored them).
 *
 * The key is kept as the webhook signing secrets are, in the database, unsealed: whoever reads this
 * table can count the links anyway. The lock (held to the end of the Migrator's transaction) holds
 * off inserts by processes still running the old code until the cutoff is recorded; links such a
 * process makes afterwards would be renumbered, so they are stopped before this migration runs
 * (docs/remittance.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE remit_payee_id_scheme (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      key bytea NOT NULL CHECK (octet_length(key) = 32),
      -- Below the opaque range (10^15 and up): an old number and a new one never meet.
      legacy_seq_max bigint NOT NULL CHECK (legacy_seq_max >= 0 AND legacy_seq_max < 1000000000000000),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`LOCK TABLE remit_payees IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`
    INSERT INTO remit_payee_id_scheme (key, legacy_seq_max)
    SELECT decode(${randomBytes(32).toString('hex')}, 'hex'), coalesce(max(seq), 0) FROM remit_payees`.execute(db);
}
