/**
 * node:test's reporter in a pooled test worker (`--test-reporter`, support/worker.ts): hands
 * every event to the worker, which renders each file's own and sends it to the runner. Writes
 * nothing itself.
 */
export default async function* workerReporter(
  source: AsyncIterable<{ type: string; data: unknown }>,
): AsyncGenerator<string> {
  for await (const event of source) (globalThis as any)[Symbol.for('mwa.test-worker')]?.event(event);
}
