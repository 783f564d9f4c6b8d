/**
 * One client's event stream (docs/events.md): woken by the feed, it reads its scope after its
 * position and writes the frames (a slow reader is waited for, never buffered without bound),
 * keeps the connection alive, and ends when its credential no longer admits it.
 */
import { PassThrough } from 'node:stream';
import type { ServiceContext } from '../../service-context.js';
import { eventBody } from '../../events/index.js';
import { reportFailure } from '../../jobs/failures.js';
import type { MerchantScope } from '../../platform/caller.js';
import { readBatch, type EventFeed, type Position } from './feed.js';
import { oneAtATime } from './one-at-a-time.js';
import { scopeEventsPastPosition } from './queries.js';
import { visibleIn, type Snapshot } from './snapshot.js';

export interface StreamOptions {
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

/** One client's stream: reads its scope after its position when woken, writes frames, keeps the connection alive. */
export class OpenStream {
  readonly out = new PassThrough();
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

  readonly wake = oneAtATime(async () => {
    if (this.ended) return;
    await this.readAll()
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
      );
  });

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
