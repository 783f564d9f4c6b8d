/**
 * The process's one follower of the events table (docs/events.md), and the walk every stream shares:
 * events by (\`writer_xid\`, \`seq\`), read only once their writing transaction is older than every
 * transaction still running. Woken by the \`mwa_events\` notification and by a poll; it wakes the
 * streams of each merchant that has new events (stream.ts).
 */
import { AsyncResource } from 'node:async_hooks';
import type { ServiceContext } from '../../service-context.js';
import { reportFailure } from '../../jobs/failures.js';
import type { MerchantScope } from '../../platform/caller.js';
import { eventsPastPosition, readHorizon, type FeedRow } from './queries.js';
import { oneAtATime } from './one-at-a-time.js';

/** The feed reads the table this often while any stream is open, notification or not. */
export const feedPollMs = 500;
/** Events read per statement by the feed and by each stream. */
export const readBatch = 200;
/** Past every `seq`: a position after every event of its transaction id. */
export const maxSeq = 9_223_372_036_854_775_807n;

export interface Position {
  xid: bigint;
  seq: bigint;
}

const scopeKey = (s: MerchantScope) => `${s.merchantId}|${s.environment}`;

/** The notification channel of migration 046's trigger. */
export const eventsChannel = 'mwa_events';

/** The process's follower of the events table; wakes the streams of the scopes that have new events. */
export class EventFeed {
  private readonly wakers = new Map<string, Set<() => void>>();
  private position: Position | undefined;
  private timer: NodeJS.Timeout | undefined;
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
  readonly read = oneAtATime(async () => {
    if (this.stopped || this.wakers.size === 0) return;
    await this.readAll().catch((err) =>
      reportFailure(
        this.ctx,
        { job: 'events.feed' },
        err,
        'the event feed could not read; streams wait for the next poll',
      ),
    );
  });

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
