// Over 300 lines: the event stream's hub and its one connection type, which share their wake-up and leases.
import { AsyncResource } from 'node:async_hooks';
import { PassThrough } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { eventBody } from '../../events/index.js';
import { ApiError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import {
  countKeyStreams,
  deleteExpiredStreams,
  deleteStream,
  eventPosition,
  eventsPastPosition,
  insertStream,
  lockKeyStreams,
  readHorizon,
  readSnapshot,
  renewStreamLeases,
  scopeEventsPastPosition,
  type FeedRow,
} from './queries.js';
import { reportFailure } from '../../jobs/failures.js';
import { parseSnapshot, visibleIn, type Snapshot } from './snapshot.js';
import type { MerchantScope } from '../../platform/caller.js';

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
/** The feed reads the table this often while any stream is open, notification or not. */
export const feedPollMs = 500;
/** Events read per statement by the feed and by each stream. */
const readBatch = 200;
/** Past every `seq`: a position after every event of its transaction id. */
const maxSeq = 9_223_372_036_854_775_807n;

interface Position {
  xid: bigint;
  seq: bigint;
}

const scopeKey = (s: MerchantScope) => `${s.merchantId}|${s.environment}`;

/** The process's follower of the events table; wakes the streams of the scopes that have new events. */
class EventFeed {
  private readonly wakers = new Map<string, Set<() => void>>();
  private position: Position | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private again = false;
  private unlisten: Promise<(() => Promise<void>) | undefined> | undefined;
  private stopped = false;
  /**
   * The service's own context (the feed is made when the routes are registered): its timer and
   * notifications run there, not in the request of the stream that started them, whose trace
   * would otherwise gather every poll of every merchant's events for as long as that stream lasts.
   */
  private readonly outside = new AsyncResource('mwa.events.feed');

  constructor(private readonly ctx: ServiceContext) {}

  subscribe(scope: MerchantScope, wake: () => void): () => void {
    const key = scopeKey(scope);
    let set = this.wakers.get(key);
    if (!set) this.wakers.set(key, (set = new Set()));
    set.add(wake);
    this.start();
    return () => {
      set.delete(wake);
      if (set.size === 0) this.wakers.delete(key);
      if (this.wakers.size === 0) this.idle();
    };
  }

  /** A notification, or a poll: read what passed the horizon since the last read. */
  read(): void {
    if (this.stopped || this.wakers.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readAll()
      .catch((err) =>
        reportFailure(
          this.ctx,
          { job: 'events.feed' },
          err,
          'the event feed could not read; streams wait for the next poll',
        ),
      )
      .finally(() => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.read();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.idle();
    const unlisten = await this.unlisten?.catch(() => undefined);
    this.unlisten = undefined;
    await unlisten?.().catch(() => {});
  }

  private start(): void {
    if (this.stopped) return;
    this.outside.runInAsyncScope(() => {
      // LISTEN on first use only: a process that serves no stream holds no connection for it.
      this.unlisten ??= this.ctx.listen
        ? this.ctx
            .listen(
              eventsChannel,
              () => this.read(),
              () => this.read(),
            )
            .catch(() => undefined)
        : Promise.resolve(undefined);
      this.timer ??= setInterval(() => this.read(), feedPollMs);
      this.timer.unref();
    });
  }

  /** No stream left: stop polling; the position is read afresh when one opens (each stream reads its own backlog). */
  private idle(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.position = undefined;
  }

  private async readAll(): Promise<void> {
    const db = this.ctx.db;
    if (!this.position) {
      this.position = { xid: (await readHorizon(db)) - 1n, seq: maxSeq };
      // What passed the horizon before this read is behind the new position: every stream looks
      // for itself once (each reads from its own position, so a spare wake costs one read).
      for (const set of this.wakers.values()) for (const wake of set) wake();
    }
    for (;;) {
      const from: Position = this.position;
      const rows: FeedRow[] = await eventsPastPosition(db, from, readBatch);
      if (rows.length === 0 || !this.position) return;
      const last: FeedRow = rows[rows.length - 1]!;
      this.position = { xid: BigInt(last.writer_xid), seq: BigInt(last.seq) };
      const woken = new Set(rows.map((r) => `${r.merchant_id}|${r.environment}`));
      for (const key of woken) for (const wake of this.wakers.get(key) ?? []) wake();
      if (rows.length < readBatch) return;
    }
  }
}

/** The notification channel of migration 046's trigger. */
export const eventsChannel = 'mwa_events';

interface StreamOptions {
  scope: MerchantScope;
  keyId: string;
  /** Types to send (undefined: all; empty: none). */
  types: string[] | undefined;
  lastEventId: string | undefined;
  /**
   * Whether the credential the stream was opened with still admits it (token not expired, key
   * enabled, `events:read`, merchant, IP allow-list): asked before frames are written and at each
   * keep-alive, so a disabled key or an expired token stops receiving events (the stream ends).
   */
  stillAllowed: () => Promise<boolean>;
}

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
async function startPosition(
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

/** One client's stream: reads its scope after its position when woken, writes frames, keeps the connection alive. */
class OpenStream {
  readonly out = new PassThrough();
  private reading = false;
  private again = false;
  private ended = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly o: StreamOptions,
    readonly id: string,
    private position: Position,
    private readonly onClosed: () => void,
    /** Opened without Last-Event-ID: the snapshot at the open, whose events are not sent (none past its xmax). */
    private seen?: Snapshot,
  ) {}

  begin(feed: EventFeed, note?: string): void {
    this.out.write(`: ${note ?? 'connected'}\nretry: 1000\n\n`);
    this.unsubscribe = feed.subscribe(this.o.scope, () => this.wake());
    // Nothing is added while earlier frames wait for a reader that does not read: they keep the connection busy
    // already.
    this.keepAlive = setInterval(() => {
      // A stream with no event to send still ends soon after its access does (a key disabled, a token expired).
      void this.o.stillAllowed().then(
        (allowed) => {
          if (!allowed) this.refuse();
          else if (!this.ended && this.out.writableLength === 0) this.out.write(': keep-alive\n\n');
        },
        () => {
          if (!this.ended && this.out.writableLength === 0) this.out.write(': keep-alive\n\n');
        },
      );
    }, this.ctx.config.eventStreamKeepAliveMs);
    this.keepAlive.unref();
    // The client went away (or the socket was cut): everything stops.
    this.out.on('close', () => this.end());
    this.wake();
  }

  wake(): void {
    if (this.ended) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readAll()
      .catch((err) =>
        reportFailure(
          this.ctx,
          { job: 'events.stream' },
          err,
          'an event stream could not read; it is ended, the client resumes with Last-Event-ID',
        ),
      )
      .then(
        () => undefined,
        () => this.end(),
      )
      .finally(() => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** The credential no longer admits the stream: it ends, saying why; a reconnect is authenticated afresh. */
  private refuse(): void {
    if (this.ended) return;
    if (!this.out.destroyed)
      this.out.write(': access ended (token expired, key disabled or scope removed); reconnect with a valid token\n\n');
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    this.unsubscribe?.();
    if (!this.out.destroyed) this.out.end();
    this.onClosed();
  }

  private async readAll(): Promise<void> {
    const { scope, types } = this.o;
    for (;;) {
      if (this.ended) return;
      const from: Position = this.position;
      const rows = await scopeEventsPastPosition(this.ctx.db, scope, from, readBatch);
      if (rows.length > 0 && !(await this.o.stillAllowed())) {
        this.refuse();
        return;
      }
      for (const row of rows) {
        if (this.ended) return;
        this.position = { xid: BigInt(row.writer_xid), seq: BigInt(row.seq) };
        if (this.seen && this.position.xid >= this.seen.xmax) this.seen = undefined;
        if (this.seen && visibleIn(this.seen, this.position.xid)) continue;
        if (types !== undefined && !types.includes(row.type)) continue;
        const frame = `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(eventBody(row))}\n\n`;
        // A slow reader: wait for the socket rather than buffer without bound.
        if (!this.out.write(frame))
          await new Promise<void>((resolve) => {
            const done = () => {
              this.out.off('drain', done);
              this.out.off('close', done);
              resolve();
            };
            this.out.on('drain', done);
            this.out.on('close', done);
          });
      }
      if (rows.length < readBatch) return;
    }
  }
}
