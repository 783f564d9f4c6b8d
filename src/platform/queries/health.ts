import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The readiness probe's statement (platform/http/health.ts): the database answers. */
export async function selectOne(db: Kysely<Database>): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
