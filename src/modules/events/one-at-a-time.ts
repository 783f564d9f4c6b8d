/**
 * Runs \`work\` one run at a time: a call while it runs asks for one more run after it (calls in the
 * meantime make one run, not one each), so a wake-up that comes during a read is never lost.
 * \`work\` handles its own failures.
 */
export function oneAtATime(work: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void work().finally(() => {
      running = false;
      if (again) {
        again = false;
        run();
      }
    });
  };
  return run;
}
