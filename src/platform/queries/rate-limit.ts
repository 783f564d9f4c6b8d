import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The statements of the rate windows (platform/auth/rate-limit.ts, docs/rate-limits.md). */

export type WindowCounts = { current: number; previous: number | null }[];

/** Takes back a refused hit of the window. */
export async function undoHit(
  db: Kysely<Database>,
  subject: string,
  bucket: string,
  windowStart: number,
): Promise<void> {
  await sql`UPDATE rate_limit_windows SET hits = hits - 1 WHERE subject = ${subject} AND bucket = ${bucket}
    AND window_start = ${windowStart}`.execute(db);
}

/** Counts `add` hits in the window and reads the previous window's count, in one statement. */
export async function countHits(
  db: Kysely<Database>,
  subject: string,
  bucket: string,
  windowStart: number,
  add: number,
): Promise<WindowCounts> {
  const { rows } = await sql<{ current: number; previous: number | null }>`
    WITH cur AS (
      INSERT INTO rate_limit_windows (subject, bucket, window_start, hits)
      VALUES (${subject}, ${bucket}, ${windowStart}, ${add})
      ON CONFLICT (subject, bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + EXCLUDED.hits
      RETURNING hits
    )
    SELECT (SELECT hits FROM cur) AS current,
           (SELECT hits FROM rate_limit_windows WHERE subject = ${subject} AND bucket = ${bucket} AND window_start =
             ${windowStart - 1}) AS previous
  `.execute(db);
  return rows;
}

/** Takes back a hit counted in the window (never below zero). */
export async function refundHit(
  db: Kysely<Database>,
  subject: string,
  bucket: string,
  windowStart: number,
): Promise<void> {
  await sql`UPDATE rate_limit_windows SET hits = hits - 1
            WHERE subject = ${subject} AND bucket = ${bucket} AND window_start = ${windowStart} AND hits >
              0`.execute(db);
}

/** Deletes the windows that started before `windowStart`. */
export async function deleteWindowsBefore(db: Kysely<Database>, windowStart: number): Promise<void> {
  await db.deleteFrom('rate_limit_windows').where('window_start', '<', String(windowStart)).execute();
}

/** Adds many windows' unwritten hits in one statement; answers their shared counts. */
export async function addHits(
  db: Kysely<Database>,
  subjects: string[],
  buckets: string[],
  windowStarts: string[],
  adds: number[],
) {
  const { rows } = await sql<{ subject: string; bucket: string; window_start: string | bigint; hits: number }>`
    INSERT INTO rate_limit_windows (subject, bucket, window_start, hits)
    SELECT * FROM unnest(${subjects}::text[], ${buckets}::text[],
                         ${windowStarts}::bigint[], ${adds}::int[])
    ON CONFLICT (subject, bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + EXCLUDED.hits
    RETURNING subject, bucket, window_start, hits
  `.execute(db);
  return rows;
}
