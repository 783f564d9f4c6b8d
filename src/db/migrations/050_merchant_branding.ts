import { sql, type Kysely } from 'kysely';

/**
 * A merchant's branding on its hosted screens (issue 42): a display name, an accent colour and a
 * logo, set in the console. The logo is kept in the database (at most 256 KB, its type sniffed
 * from the bytes) so that every process serves it; `logo_etag` is the hash of its bytes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE merchant_branding (
      merchant_id text PRIMARY KEY REFERENCES merchants(id),
      display_name text,
      accent_color text CHECK (accent_color ~ '^#[0-9a-f]{6}$'),
      logo bytea,
      logo_type text CHECK (logo_type IN ('image/png', 'image/jpeg', 'image/webp')),
      logo_etag text,
      updated_at timestamptz NOT NULL,
      CHECK ((logo IS NULL) = (logo_type IS NULL) AND (logo IS NULL) = (logo_etag IS NULL)),
      CHECK (octet_length(logo) <= 262144)
    )`.execute(db);
}
