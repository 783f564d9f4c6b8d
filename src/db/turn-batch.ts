/**
 * Gathers the calls made during one turn of the event loop (the requests whose bytes arrived
 * together) and runs them as one batch at the end of the turn (`setImmediate`), at most `max` to a
 * batch; more waiting start further batches at once. Each call gets its own output, or the
 * batch's error. Used for statements that serve many requests at once: the nonces of signed
 * requests (platform/writes/nonce-batch.ts) and keyed reads (`readRowsByKey`, direct.ts).
 */
export class TurnBatcher<I, O> {
  private waiting: Array<{ item: I; resolve: (output: O) => void; reject: (err: unknown) => void }> = [];
  private scheduled: NodeJS.Immediate | undefined;
  readonly stats = { batches: 0, items: 0 };

  /** `runBatch` answers every item of a batch, in the batch's order. */
  constructor(
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly max: number,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.scheduled ??= setImmediate(() => {
        this.scheduled = undefined;
        const all = this.waiting;
        this.waiting = [];
        for (let i = 0; i < all.length; i += this.max) void this.run(all.slice(i, i + this.max));
      });
    });
  }

  private async run(batch: typeof this.waiting): Promise<void> {
    try {
      const outputs = await this.runBatch(batch.map((w) => w.item));
      if (outputs.length !== batch.length) throw new Error('turn batch: an item of the batch got no answer');
      this.stats.batches++;
      this.stats.items += batch.length;
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
