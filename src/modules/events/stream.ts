import { AsyncResource } from 'node:async_hooks';
import type { PassThrough } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  countKeyStreams,
  deleteExpiredStreams,
  deleteStream,
  eventPosition,
  insertStream,
  lockKeyStreams,
  readSnapshot,
  renewStreamLeases,
} from './queries.js';
import { reportFailure } from '../../jobs/failures.js';
import { parseSnapshot, type Snapshot } from './snapshot.js';
import type { MerchantScope } from '../../platform/caller.js';
import { EventFeed, maxSeq, type Position } from './feed.js';
import { OpenStream, type StreamOptions } from './open-stream.js';

/**
 * The event stream (`GET /v1/events/stream`, docs/events.md): server-sent events of one
 * merchant and environment.
 *
 * Order and resume. A stream walks the events by (`writer_xid`, `seq`) and reads only those
 * whose writing transaction is older than every transaction still running
 * (`pg_snapshot_xmin`, migration 046): no event can still commit in front of the position a
 * stream has reached, so the replay of kept events (after `Last-Event-ID`) and the live tail
 * are one walk, with no gap and no repeat, whatever order concurrent writers commit in. The
 * position is the last event sent; a reconnect with its id continues the same walk, in any
 * process.
 *
 * Waking. One feed per process (`EventFeed`) follows the whole table by the same key, woken by
 * the `mwa_events` notification (LISTEN on PostgreSQL, in-process on the embedded database)
 * and by a poll every `feedPollMs` (the horizon moves when an older writer ends, which
 * notifies nothing; and notifications can be lost with their connection). It tells the streams
 * of each merchant that has new events; each stream then reads its own.
 *
 * Bound: `streamsPerKeyMax` open streams per API key, across processes (`event_streams`,
 * leased, renewed while open); the next is refused with 429 `rate_limited`.
 */

/** Open streams one API key may hold, across every process. */
export const streamsPerKeyMax = 5;
/** What a refused stream is told to wait (`retry_after`, seconds). */
export const streamRetryAfterSeconds = 30;
/** A stream's lease in `event_streams`: renewed every `leaseRenewMs` while open; a dead process's streams free their
 * slots after it. */
export const streamLeaseMs = 45_000;
const leaseRenewMs = 15_000;
/** Every stream of one listener: the feed, the open streams (ended by the drain), their leases. */
export class StreamHub {
  private readonly feed: EventFeed;
  private readonly streams = new Set<OpenStream>();
  private renewTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** The service's context for the lease renewals (every stream's), as the feed's (`EventFeed.outside`). */
  private readonly outside = new AsyncResource('mwa.events.leases');

  constructor(private readonly ctx: ServiceContext) {
    this.feed = new EventFeed(ctx);
  }

  /** Opens a stream: the lease first (429 `rate_limited` past the bound), then the starting position. */
  async open(o: StreamOptions): Promise<PassThrough> {
    if (this.closing) throw new ApiError('api_error', 'The service is shutting down; reconnect.');
    const db = this.ctx.db;
    const id = newId('evs');
    await db.transaction().execute(async (trx) => {
      await lockKeyStreams(trx, o.keyId);
      await deleteExpiredStreams(trx, o.keyId);
      if ((await countKeyStreams(trx, o.keyId)) >= streamsPerKeyMax) {
        throw new ApiError(
          'rate_limited',
          `At most ${streamsPerKeyMax} event streams per API key are open at once; close one first.`,
          { retry_after: streamRetryAfterSeconds },
          { 'retry-after': String(streamRetryAfterSeconds) },
        );
      }
      await insertStream(trx, { id, keyId: o.keyId, scope: o.scope }, streamLeaseMs);
    });
    try {
      const start = await startPosition(db, o.scope, o.lastEventId);
      const stream = new OpenStream(this.ctx, o, id, start.position, () => this.closed(stream), start.seen);
      this.streams.add(stream);
      this.renewTimer ??= this.outside.runInAsyncScope(() => setInterval(() => void this.renew(), leaseRenewMs));
      this.renewTimer.unref();
      stream.begin(this.feed, start.note);
      return stream.out;
    } catch (err) {
      await deleteStream(db, id).catch(() => {});
      throw err;
    }
  }

  /** The drain: every stream ends now (clients reconnect with Last-Event-ID to another process). */
  closeAll(): void {
    this.closing = true;
    for (const s of [...this.streams]) s.end();
  }

  async stop(): Promise<void> {
    this.closeAll();
    clearInterval(this.renewTimer);
    await this.feed.stop();
  }

  get size(): number {
    return this.streams.size;
  }

  private closed(stream: OpenStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) {
      clearInterval(this.renewTimer);
      this.renewTimer = undefined;
    }
    void deleteStream(this.ctx.db, stream.id).catch(() => {});
  }

  private async renew(): Promise<void> {
    const ids = [...this.streams].map((s) => s.id);
    if (ids.length === 0) return;
    await renewStreamLeases(this.ctx.db, ids, streamLeaseMs).catch((err) =>
      reportFailure(this.ctx, { job: 'events.stream-lease' }, err, 'stream leases not renewed; retried'),
    );
  }
}

/**
 * Where a stream starts: after the `Last-Event-ID` event of the scope; an id the scope does not
 * have (pruned, or never its) replays every kept event; no id: the events written from now on.
 */
export async function startPosition(
  db: Kysely<Database>,
  scope: MerchantScope,
  lastEventId: string | undefined,
): Promise<{ position: Position; seen?: Snapshot; note?: string }> {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const row = await eventPosition(db, scope, lastEventId.trim());
    if (row) return { position: { xid: BigInt(row.xid), seq: BigInt(row.seq) } };
    return {
      position: { xid: -1n, seq: -1n },
      note: 'Last-Event-ID is not a kept event of this merchant: every kept event follows',
    };
  }
  // From the horizon (the snapshot's xmin), but not what the snapshot saw: an old open transaction of
  // the cluster holds the horizon back, and events committed before the open sit past it.
  const seen = parseSnapshot(await readSnapshot(db));
  return { position: { xid: seen.xmin - 1n, seq: maxSeq }, seen };
}
