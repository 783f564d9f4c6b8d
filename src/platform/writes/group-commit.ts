// Over 300 lines: the committer's pump (partitions, order keys, solo writes, batches in flight) is
// one scheduling rule whose parts hold each other's invariants; splitting it would scatter them.
import { Counter, type Registry } from 'prom-client';
import type { TraceContext } from '../telemetry/spans.js';
import { tracing } from '../telemetry/telemetry.js';

/**
 * Group commit: requests that arrive while earlier ones are being written are gathered into one
 * transaction and one commit (docs/group-commit.md). The batcher knows nothing of what a batch
 * does; `runBatch` (write-batch.ts, `runWriteBatch`) decides each item's outcome inside the shared
 * transaction, and answers every item only after the commit.
 *
 * A batch takes the waiting requests of one partition, whatever their merchant: the partition is
 * what the deployment keeps inside one transaction (`GROUP_COMMIT_PARTITION`: one partition on a
 * single PostgreSQL; a shard's key where a sharded engine needs one). Each request also has an
 * order key (its merchant and environment): an order key is in at most one running batch of this
 * process, so a merchant's writes commit in the order they arrived, and its later requests wait
 * for the next batch without holding a connection to wait for its rows.
 */

export interface BatchOptions {
  /** Items per batch at most. */
  maxBatch: number;
  /** Batches (transactions, so connections) running at once. */
  maxInFlight: number;
  /**
   * Transactions running at once, batches and solo writes together (default `maxInFlight`): a
   * solo write (a batch of its own) takes a free one even while `maxInFlight` batches run, so
   * solo writes of different merchants run side by side; a merchant's writes still run one batch
   * at a time, in arrival order.
   */
  maxTransactions?: number;
  /**
   * Start the next batch before answering the one that has just committed, and answer it on the
   * next turn of the event loop. Only where a batch yields to the event loop while it waits for
   * its database (PostgreSQL): the embedded database's statements complete without yielding, so
   * every batch already queued would run before any answer went out.
   */
  answerAfterNextStart?: boolean;
}

export interface BatchRunner<I, O> {
  /**
   * Runs the items in one transaction; answers one outcome per item, in order, once committed.
   * `fallback`: the item is run again alone because its batch failed (the runner may then avoid
   * what it does for a batch). `locked`: called once the batch holds the locks that order it
   * (write-batch.ts: the merchants' write locks): its order keys may then go to the next batch,
   * whose transaction waits for those locks in the database and so commits after this one.
   */
  runBatch(items: readonly I[], fallback?: boolean, locked?: () => void): Promise<O[]>;
}

interface Waiting<I, O> {
  partition: string;
  /** Requests of one order key (a merchant in an environment) commit in arrival order. */
  order: string;
  item: I;
  /** Runs in a batch of its own (a write that locks rows before the money: write-batch.ts). */
  solo: boolean;
  /** Batched only with writes of its lane (a batch effect that locks rows before the money); undefined: the rest. */
  lane: unknown;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
  /** With tracing on, the submitter's trace: the batch's span is in it (telemetry.ts). */
  context: TraceContext | undefined;
}

export interface BatchStats {
  batches: number;
  items: number;
  /** Batches whose transaction failed and whose items were then run one by one. */
  fallbacks: number;
  largest: number;
  /** Items the runner answered together through a batch effect or a batch statement (write-batch.ts), not one by one.
   * */
  together: number;
}

export class GroupCommitter<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private readonly busy = new Set<string>();
  /** Batches running, and all transactions running (solo writes included). */
  private inFlight = 0;
  private running = 0;
  private readonly maxTransactions: number;
  readonly stats: BatchStats = { batches: 0, items: 0, fallbacks: 0, largest: 0, together: 0 };

  constructor(
    private readonly runner: BatchRunner<I, O>,
    private readonly options: BatchOptions,
  ) {
    if (options.maxBatch < 1 || options.maxInFlight < 1)
      throw new Error('group commit: maxBatch and maxInFlight must be at least 1');
    this.maxTransactions = Math.max(options.maxInFlight, options.maxTransactions ?? 0);
  }

  /** The item's outcome, once the transaction that wrote it has committed. */
  submit(partition: string, order: string, item: I, solo = false, lane?: unknown): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const context = tracing()?.activeContext();
      this.waiting.push({ partition, order, item, solo, lane, resolve, reject, context });
      // Started on the next turn of the event loop, not at once: requests whose bytes arrived
      // together reach this point in that turn and share the batch. On the embedded database
      // that turn is the only chance to: its statements complete without yielding to the loop.
      this.scheduled ??= setImmediate(() => {
        this.scheduled = undefined;
        this.pump();
      });
    });
  }

  private scheduled: NodeJS.Immediate | undefined;

  /**
   * Starts batches while connections are free and requests of free order keys wait. In arrival
   * order, the first request that may start now does: a solo request is a batch of its own (up to
   * `maxTransactions` at once); any other takes, in arrival order, the waiting requests of its
   * partition whose order key is free, whatever their merchant (up to `maxInFlight` batches at once).
   * A request that may not start holds back its order key's later requests: they keep their order.
   */
  private pump(): void {
    for (;;) {
      if (this.running >= this.maxTransactions) return;
      const batchFree = this.inFlight < this.options.maxInFlight;
      const heldBack = new Set<string>();
      let found: Waiting<I, O>[] | undefined;
      for (let first = 0; first < this.waiting.length && found === undefined; first++) {
        const head = this.waiting[first]!;
        if (this.busy.has(head.order) || heldBack.has(head.order)) continue;
        if (head.solo) {
          found = this.waiting.splice(first, 1);
        } else if (!batchFree) {
          heldBack.add(head.order);
        } else {
          const batch: Waiting<I, O>[] = (found = []);
          const partition = head.partition;
          for (let i = first; i < this.waiting.length && batch.length < this.options.maxBatch;) {
            const w = this.waiting[i]!;
            if (w.partition !== partition || this.busy.has(w.order) || heldBack.has(w.order)) {
              i++;
            } else if (w.solo || w.lane !== head.lane) {
              // A solo write, or one of another lane, waiting for its turn holds back its merchant's later writes.
              heldBack.add(w.order);
              i++;
            } else {
              batch.push(...this.waiting.splice(i, 1));
            }
          }
        }
      }
      if (found === undefined) return;
      const batch = found;
      const solo = batch.length === 1 && batch[0]!.solo;
      const orders = [...new Set(batch.map((w) => w.order))];
      for (const order of orders) this.busy.add(order);
      this.running++;
      if (!solo) this.inFlight++;
      // A batch's order keys are freed as soon as it holds its locks (`locked`), or when it ends:
      // a merchant's next batch then waits for them on its own connection in the database
      // instead of for this batch's last round trips in this process, which under load are
      // queued behind the event loop's other work.
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        for (const order of orders) this.busy.delete(order);
        this.pump();
      };
      const done = () => {
        this.running--;
        if (!solo) this.inFlight--;
        if (released) this.pump();
        else release();
      };
      // With tracing on, the batch is a span in its first request's trace, linked to the others'
      // (pump runs in whichever context called it: another batch's, a timer's).
      const t = tracing();
      if (t === undefined) void this.commit(batch, done, release);
      else
        void t.inBatchSpan(
          'group commit',
          { 'mwa.batch.size': batch.length },
          batch.map((w) => w.context),
          () => this.commit(batch, done, release),
        );
    }
  }

  /**
   * Runs a batch; `done` frees its order keys and connection. With `answerAfterNextStart`, on
   * success the next batch is started first and this one's writes are answered on the next turn of
   * the event loop: answering them (each response serialised and written) would otherwise delay
   * the next batch's statement, on the path every write of one merchant waits on (docs/performance.md
   * "Eleventh round").
   */
  private async commit(batch: Waiting<I, O>[], done: () => void, locked: () => void): Promise<void> {
    this.stats.batches++;
    this.stats.items += batch.length;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    let outcomes: O[];
    try {
      outcomes = await this.runner.runBatch(
        batch.map((w) => w.item),
        false,
        locked,
      );
    } catch (err) {
      try {
        await this.retryAlone(batch, err);
      } finally {
        done();
      }
      return;
    }
    const answer = () => batch.forEach((w, i) => w.resolve(outcomes[i]!));
    if (!this.options.answerAfterNextStart) {
      answer();
      done();
      return;
    }
    setImmediate(answer);
    done();
  }

  /**
   * The batch's transaction did not commit (a deadlock with another process, a lost connection),
   * or its commit's outcome is unknown: every item runs again on its own. The items carry
   * idempotency keys, so an item whose batch did commit finds its own result under its key and
   * answers it. An item alone in its batch is answered with the error.
   */
  private async retryAlone(batch: Waiting<I, O>[], err: unknown): Promise<void> {
    if (batch.length === 1) {
      batch[0]!.reject(err);
      return;
    }
    this.stats.fallbacks++;
    for (const w of batch) {
      try {
        const [outcome] = await this.runner.runBatch([w.item], true);
        w.resolve(outcome!);
      } catch (e) {
        w.reject(e);
      }
    }
  }
}

/** A turn batcher's counts (db/turn-batch.ts). */
type TurnStats = { readonly batches: number; readonly items: number };

/**
 * The committer's counts on /metrics: batches, writes, fallbacks (each since start-up). Counters
 * (they only grow, and end in `_total` as Prometheus names counters): read from the batchers'
 * own counts when scraped, not counted twice.
 */
export function registerGroupCommitMetrics(
  registry: Registry,
  stats: BatchStats,
  nonces?: TurnStats,
  reads?: TurnStats,
): void {
  for (const [name, help, read] of [
    ...(nonces
      ? ([
          [
            'nonce_batch_statements_total',
            'Statements that consumed the nonces of signed requests (nonce-batch.ts)',
            () => nonces.batches,
          ],
          [
            'nonce_batch_nonces_total',
            'Nonces consumed by them (nonces / statements: the mean batch size)',
            () => nonces.items,
          ],
        ] as const)
      : []),
    ...(reads
      ? ([
          [
            'read_batches_total',
            "Turns of keyed reads such as members' balances run together (readRowsByKey, db/direct.ts; one " +
              'statement per text in a turn)',
            () => reads.batches,
          ],
          [
            'read_batch_reads_total',
            'Reads answered by them (reads / batches: the mean batch size)',
            () => reads.items,
          ],
        ] as const)
      : []),
    ['group_commit_batches_total', 'Transactions (or single statements) written by group commit', () => stats.batches],
    [
      'group_commit_writes_total',
      'Writes in those transactions (writes / batches: the mean batch size)',
      () => stats.items,
    ],
    [
      'group_commit_fallbacks_total',
      'Batches whose transaction failed and whose writes then ran one by one',
      () => stats.fallbacks,
    ],
    [
      'group_commit_together_total',
      "Writes run together by their route's batch effect or batch statement, without a savepoint each",
      () => stats.together,
    ],
  ] as const) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
}
