import { isIPv4 } from 'node:net';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../errors.js';
import { ipv6Hextets } from '../http/ip-address.js';
import { addHits, countHits, deleteWindowsBefore, refundHit, undoHit } from '../queries/rate-limit.js';

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
  await undoHit(db, hit.subject, hit.bucket, hit.position.windowStart);
  throw new ApiError(
    'rate_limited',
    undefined,
    { retry_after: decision.retryAfterSeconds },
    { 'retry-after': String(decision.retryAfterSeconds) },
  );
}

/**
 * Counts the hit atomically in the database (so several processes share one window) and reads the
 * previous window in the same statement; then settles it.
 */
export async function consume(
  db: Kysely<Database>,
  subject: string,
  bucket: string,
  limit: number,
  nowMs: number,
): Promise<CountedHit> {
  const position = windowAt(nowMs);
  const { windowStart } = position;
  const rows = await countHits(db, subject, bucket, windowStart, 1);
  await settleHit(
    db,
    { subject, bucket, position, current: Number(rows[0]!.current), previous: Number(rows[0]!.previous ?? 0) },
    limit,
  );
  return { subject, bucket, windowStart };
}

export interface CountedHit {
  subject: string;
  bucket: string;
  windowStart: number;
}

/** Takes back a hit counted by `consume` (in the window it was counted in). */
export async function refund(db: Kysely<Database>, hit: CountedHit): Promise<void> {
  await refundHit(db, hit.subject, hit.bucket, hit.windowStart);
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
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

export async function purgeOldWindows(db: Kysely<Database>, nowMs: number): Promise<void> {
  const windowStart = Math.floor(nowMs / 1000 / windowSeconds);
  await deleteWindowsBefore(db, windowStart - 1);
}

/** Far from the limit a process counts hits in memory: below this share of the limit... */
export const localShareOfLimit = 0.9;
/** ...and at most this share of it (at least one hit) unwritten per window, per process. */
export const unflushedShareOfLimit = 0.025;
/** Hits counted in memory reach the shared table this often. */
export const rateFlushIntervalMs = 50;
/**
 * A process's view of a window (the others' hits) is trusted this long after it was last read
 * from the table; older (a process that was idle while others filled the window), the next hit
 * asks the table. A busy process refreshes it with every flush, so only idle ones pay a read.
 */
export const rateViewFreshMs = 1_000;

interface WindowCount {
  subject: string;
  bucket: string;
  windowStart: number;
  /** The shared count as last read from the table (every process's written hits). */
  known: number;
  /** The previous window's shared count, read with the first hit of this window. */
  previous: number;
  /** Hits this process admitted and has not written yet. */
  pending: number;
  /** The request time of the latest table read that refreshed `known` (a decision or a flush). */
  readAtMs: number;
  /** The request time of the latest hit counted in memory. */
  lastHitMs: number;
}

/**
 * Rate windows shared by every process through `rate_limit_windows`, without a round trip per
 * request (docs/rate-limits.md, "Several processes"). The first hit of a window in a process, and
 * every hit once the estimate nears the limit, is counted in the table in the same statement that
 * decides it, exactly as `consume` does. In between, far from the limit, hits are counted in
 * memory and written in one statement every `rateFlushIntervalMs`, which also brings back the
 * other processes' counts. A process holds at most max(1, unflushedShareOfLimit × limit)
 * unwritten hits of a window, and goes back to the table as soon as its estimate passes
 * localShareOfLimit × limit, so N processes admit at most
 * max(0, 2·N·unflushedShareOfLimit − (1 − localShareOfLimit)) × limit above the limit in a
 * window, for views no older than `rateViewFreshMs` (an older one is read again first): none for
 * one or two processes. A crash loses at most the unwritten hits (it only admits more).
 */
export class RateWindows {
  private readonly counts = new Map<string, WindowCount>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Counts one hit in memory when the window is far enough from the quota (no promise); false when
   * the decision needs the table: then call `hit`, which counts it.
   */
  hitHeld(subject: string, bucket: string, limit: number, nowMs: number): boolean {
    const position = windowAt(nowMs);
    const count = this.counts.get(`${subject}\u0000${bucket}\u0000${position.windowStart}`);
    if (!count || nowMs - count.readAtMs > rateViewFreshMs) return false;
    const weight = (windowSeconds - position.elapsedSeconds) / windowSeconds;
    const estimate = count.previous * weight + count.known + count.pending + 1;
    if (
      estimate > limit * localShareOfLimit ||
      count.pending + 1 > Math.max(1, Math.floor(limit * unflushedShareOfLimit))
    )
      return false;
    count.pending++;
    count.lastHitMs = Math.max(count.lastHitMs, nowMs);
    this.timer ??= setTimeout(() => void this.flush(), rateFlushIntervalMs);
    return true;
  }

  /** Counts one hit of `subject` in `bucket`; throws `rate_limited` (429) when over `limit` per minute. */
  async hit(subject: string, bucket: string, limit: number, nowMs: number): Promise<void> {
    if (this.hitHeld(subject, bucket, limit, nowMs)) return;
    const position = windowAt(nowMs);
    const id = `${subject}\u0000${bucket}\u0000${position.windowStart}`;
    const count = this.counts.get(id);
    // In the table, with this process's unwritten hits: the decision sees every written hit.
    const add = 1 + (count?.pending ?? 0);
    if (count) count.pending = 0;
    const rows = await countHits(this.db, subject, bucket, position.windowStart, add);
    const current = Number(rows[0]!.current);
    const previous = Number(rows[0]!.previous ?? 0);
    const held = this.counts.get(id);
    if (held) {
      held.known = Math.max(held.known, current);
      held.previous = previous;
      held.readAtMs = Math.max(held.readAtMs, nowMs);
    } else {
      this.forgetOld(position.windowStart);
      this.counts.set(id, {
        subject,
        bucket,
        windowStart: position.windowStart,
        known: current,
        previous,
        pending: 0,
        readAtMs: nowMs,
        lastHitMs: nowMs,
      });
    }
    try {
      await settleHit(this.db, { subject, bucket, position, current, previous }, limit);
    } catch (err) {
      const c = this.counts.get(id);
      if (c) c.known = Math.max(0, c.known - 1);
      throw err;
    }
  }

  /** Writes every unwritten hit in one statement and reads back the shared counts. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const due = [...this.counts.values()].filter((c) => c.pending > 0);
      if (due.length === 0) return;
      const adds = due.map((c) => c.pending);
      const seen = due.map((c) => c.lastHitMs);
      for (const c of due) c.pending = 0;
      try {
        const rows = await addHits(
          this.db,
          due.map((c) => c.subject),
          due.map((c) => c.bucket),
          due.map((c) => String(c.windowStart)),
          adds,
        );
        for (const r of rows) {
          const c = this.counts.get(`${r.subject}\u0000${r.bucket}\u0000${String(r.window_start)}`);
          if (c) c.known = Math.max(c.known, Number(r.hits));
        }
        // Read back after the latest hit it wrote: the view is as fresh as that hit's time.
        due.forEach((c, i) => (c.readAtMs = Math.max(c.readAtMs, seen[i]!)));
      } catch (err) {
        // Not written: kept for the next flush.
        due.forEach((c, i) => (c.pending += adds[i]!));
        this.timer ??= setTimeout(() => void this.flush(), rateFlushIntervalMs * 10);
        this.onError(err);
      }
    });
    return this.flushing;
  }

  private forgetOld(windowStart: number): void {
    for (const [id, c] of this.counts) if (c.windowStart < windowStart - 1 && c.pending === 0) this.counts.delete(id);
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
