import { isIPv4 } from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ApiError } from './errors.js';
import { ipv6Hextets } from './ip-address.js';

const windowSeconds = 60;

export interface RateDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/**
 * Sliding-window estimate over two fixed one-minute windows: the previous window's count weighted
 * by how much of it still overlaps the last 60 seconds, plus the current count.
 */
export function decide(previous: number, current: number, limit: number, elapsedSeconds: number): RateDecision {
  const weight = (windowSeconds - elapsedSeconds) / windowSeconds;
  const estimate = previous * weight + current;
  if (estimate <= limit) return { allowed: true, retryAfterSeconds: 0 };
  let wait: number;
  if (current > limit) {
    wait = windowSeconds - elapsedSeconds + windowSeconds * ((current - limit) / current);
  } else {
    // Time until the previous window's weight has decayed enough for one more request.
    wait = windowSeconds * (1 - (limit - current) / previous) - elapsedSeconds;
  }
  return { allowed: false, retryAfterSeconds: Math.min(windowSeconds, Math.max(1, Math.ceil(wait))) };
}

export interface WindowPosition {
  windowStart: number;
  elapsedSeconds: number;
}

export function windowAt(nowMs: number): WindowPosition {
  const nowSeconds = nowMs / 1000;
  const windowStart = Math.floor(nowSeconds / windowSeconds);
  return { windowStart, elapsedSeconds: nowSeconds - windowStart * windowSeconds };
}

/**
 * Applies the decision to a hit already counted: refused hits are undone, so a client that keeps
 * hammering is not locked out for longer than the window, and 429 is thrown.
 */
export async function settleHit(
  db: Kysely<Database>,
  hit: { subject: string; bucket: string; position: WindowPosition; current: number; previous: number },
  limit: number,
): Promise<void> {
  const decision = decide(hit.previous, hit.current, limit, hit.position.elapsedSeconds);
  if (decision.allowed) return;
  await sql`UPDATE rate_limit_windows SET hits = hits - 1 WHERE subject = ${hit.subject} AND bucket = ${hit.bucket} AND window_start = ${hit.position.windowStart}`.execute(db);
  throw new ApiError('rate_limited', undefined, { retry_after: decision.retryAfterSeconds }, { 'retry-after': String(decision.retryAfterSeconds) });
}

/**
 * Counts the hit atomically in the database (so several processes share one window) and reads the
 * previous window in the same statement; then settles it.
 */
export async function consume(db: Kysely<Database>, subject: string, bucket: string, limit: number, nowMs = Date.now()): Promise<CountedHit> {
  const position = windowAt(nowMs);
  const { windowStart } = position;
  const { rows } = await sql<{ current: number; previous: number | null }>`
    WITH cur AS (
      INSERT INTO rate_limit_windows (subject, bucket, window_start, hits)
      VALUES (${subject}, ${bucket}, ${windowStart}, 1)
      ON CONFLICT (subject, bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
      RETURNING hits
    )
    SELECT (SELECT hits FROM cur) AS current,
           (SELECT hits FROM rate_limit_windows WHERE subject = ${subject} AND bucket = ${bucket} AND window_start = ${windowStart - 1}) AS previous
  `.execute(db);
  await settleHit(db, { subject, bucket, position, current: Number(rows[0]!.current), previous: Number(rows[0]!.previous ?? 0) }, limit);
  return { subject, bucket, windowStart };
}

export interface CountedHit {
  subject: string;
  bucket: string;
  windowStart: number;
}

/** Takes back a hit counted by `consume` (in the window it was counted in). */
export async function refund(db: Kysely<Database>, hit: CountedHit): Promise<void> {
  await sql`UPDATE rate_limit_windows SET hits = hits - 1
            WHERE subject = ${hit.subject} AND bucket = ${hit.bucket} AND window_start = ${hit.windowStart} AND hits > 0`.execute(db);
}

/**
 * The rate-limit subject of a source address: an IPv4 address as it is (also when it arrives
 * IPv4-mapped), an IPv6 address by its /64, the smallest block a host is normally given, so that
 * one host cannot get a fresh budget per address.
 */
export function sourceSubject(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip)) return ip;
  const hextets = ipv6Hextets(ip);
  if (!hextets) return ip.slice(0, 64);
  return `${hextets.slice(0, 4).map((h) => h.toString(16)).join(':')}::/64`;
}

export async function purgeOldWindows(db: Kysely<Database>, nowMs = Date.now()): Promise<void> {
  const windowStart = Math.floor(nowMs / 1000 / windowSeconds);
  await db.deleteFrom('rate_limit_windows').where('window_start', '<', String(windowStart - 1)).execute();
}
