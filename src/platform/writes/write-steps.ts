/**
 * The order a batch's writes run in (write-batch.ts). Each merchant's writes run in the order
 * they arrived (a deposit to a member created just before it in the batch finds the member; a
 * withdrawal sent before a deposit does not spend it). Merchants share no row, so only that order
 * matters: the writes run in steps, each step the longest run of one kind at the head of every
 * merchant's queue, the kind of the earliest head.
 *
 * `writes`: the indexes of the writes to run, in arrival order; `merchantOf` and `kindOf` say
 * whose each one is and what kind. Yields each step's kind and its writes in index order.
 */
export function* writeSteps<K>(
  writes: readonly number[],
  merchantOf: (i: number) => string,
  kindOf: (i: number) => K,
): Generator<{ kind: K; step: number[] }> {
  const queues = new Map<string, number[]>();
  for (const i of writes) queues.set(merchantOf(i), [...(queues.get(merchantOf(i)) ?? []), i]);
  for (;;) {
    const heads = [...queues.values()].filter((q) => q.length > 0).map((q) => q[0]!);
    if (heads.length === 0) return;
    const kind = kindOf(Math.min(...heads));
    const step: number[] = [];
    for (const queue of queues.values())
      while (queue.length > 0 && kindOf(queue[0]!) === kind) step.push(queue.shift()!);
    step.sort((x, y) => x - y);
    yield { kind, step };
  }
}
