/**
 * Work run one at a time (the runner's polls): a call while it runs asks for one more run after
 * it, so a wake is never lost, and answers the run in progress. Once `stopped` says so, no run
 * repeats.
 */
export class CoalescedRun {
  private current: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly stopped: () => boolean,
  ) {}

  run(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = (async () => {
      do {
        this.again = false;
        await this.work();
      } while (this.again && !this.stopped());
    })().finally(() => (this.current = undefined));
    return this.current;
  }

  /** The run in progress, if any (to wait for it). */
  get running(): Promise<void> | undefined {
    return this.current;
  }
}
