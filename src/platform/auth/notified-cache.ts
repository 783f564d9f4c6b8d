/**
 * What the per-process caches share (auth-cache.ts, member-cache.ts, the assets module's
 * catalogue-cache.ts): entries trusted only while the process listens to the database's change
 * notifications, emptied by them, and never filled by a read that began before an invalidation
 * (the generation it started under has passed: it may have seen the state from before the
 * change). A process that changes the rows itself may also set the cache aside for a while
 * (`ownWrite`), until its own notification has surely come back.
 */
export class NotifiedCache<V> {
  protected readonly entries = new Map<string, V>();
  private generation = 0;
  private listening = false;
  private bypassUntilMs = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly nowMs: () => number = Date.now,
    private readonly ownWriteBypassMs = 0,
  ) {}

  /** The generation a database read starts under; give it back to `put`. */
  begin(): number {
    return this.generation;
  }

  protected get trusted(): boolean {
    return this.listening && (this.bypassUntilMs === 0 || this.nowMs() >= this.bypassUntilMs);
  }

  get(key: string): V | undefined {
    return this.trusted ? this.entries.get(key) : undefined;
  }

  put(key: string, value: V, generation: number): void {
    if (!this.trusted || generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.evict(oldest);
    }
    this.entries.set(key, value);
    this.stored(key, value);
  }

  /** A change notification that names no rows: forget everything. */
  invalidate(): void {
    this.bumpGeneration();
    this.entries.clear();
    this.cleared();
  }

  /** This process is changing the rows: answer nothing until its change has surely come back. */
  ownWrite(): void {
    this.invalidate();
    this.bypassUntilMs = this.nowMs() + this.ownWriteBypassMs;
  }

  /** The notification connection came up (true) or was lost (false); either way nothing held is trusted. */
  setListening(listening: boolean): void {
    this.invalidate();
    this.listening = listening;
  }

  get isListening(): boolean {
    return this.listening;
  }

  get size(): number {
    return this.entries.size;
  }

  /** For a notification that names some rows: reads begun before it are not stored. */
  protected bumpGeneration(): void {
    this.generation++;
  }

  /** Drops the oldest entry when full; a subclass that indexes its entries drops the index too. */
  protected evict(key: string): void {
    this.entries.delete(key);
  }

  /** After an entry is stored (for a subclass's index). */
  protected stored(_key: string, _value: V): void {}

  /** After everything was forgotten (for a subclass's index). */
  protected cleared(): void {}
}
