import { sql, type Kysely } from 'kysely';

/**
 * Exports (issue 41, point 3; docs/exports.md): the request and its file. The file is kept in the
 * database as a sequence of bytea chunks of at most 256 KiB (`export_chunks`), not in the data
 * directory (several processes, possibly on several machines, serve the same file) nor as a
 * large object (the same table and statements on PostgreSQL and the embedded database, deleted
 * with its export row, no `lo_unlink` to forget). The writer inserts one chunk at a time and the
 * download reads one at a time, so neither holds more than a chunk and a batch of rows.
 * Indexes let the writer walk each kind's rows of one merchant by `seq` where none did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE exports (
      id text PRIMARY KEY,
      seq bigserial UNIQUE,
      merchant_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      kind text NOT NULL,
      format text NOT NULL CHECK (format IN ('csv', 'jsonl')),
      created_gte timestamptz NOT NULL,
      created_lt timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
      row_count bigint,
      sha256 text,
      size_bytes bigint,
      failure_reason text,
      created_at timestamptz NOT NULL,
      completed_at timestamptz,
      expires_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX exports_merchant ON exports (merchant_id, environment, seq)`.execute(db);
  await sql`CREATE INDEX exports_expiry ON exports (expires_at) WHERE expires_at IS NOT NULL`.execute(db);
  await sql`
    CREATE TABLE export_chunks (
      export_id text NOT NULL REFERENCES exports(id) ON DELETE CASCADE,
      n integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (export_id, n)
    )
  `.execute(db);
  await sql`CREATE INDEX exchange_orders_merchant ON exchange_orders (merchant_id, environment, seq)`.execute(db);
  await sql`CREATE INDEX earn_orders_merchant ON earn_orders (merchant_id, environment, seq)`.execute(db);
  await sql`CREATE INDEX card_transactions_merchant ON card_transactions (merchant_id, environment, seq)`.execute(db);
  await sql`CREATE INDEX members_merchant_seq ON members (merchant_id, environment, seq)`.execute(db);
}
