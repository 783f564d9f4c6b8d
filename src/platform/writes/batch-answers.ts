import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { writeAlone, type WriteMode } from './write-batch.js';

/*
 * The bookkeeping every batch effect does (docs/write-model.md): an item is checked, gated and
 * posted with the others, and an item refused at any step is answered with its refusal and goes
 * no further. Written once here instead of in each area's batch effect.
 */

/** A batch effect's answer for one item: its result, its refusal, or `writeAlone`. */
export type BatchAnswer<V> = V | Error | typeof writeAlone;

/** An item on its way through a batch effect: `i` is its place in the call (its answer's index). */
export interface BatchItem {
  i: number;
}

/**
 * Each item checked by `check` (its own fields, what was read for all): what `check` returns, with
 * the item's place, for those that pass; an item whose check throws is answered with what it
 * threw.
 */
export async function checkEach<P, T extends object>(
  items: readonly P[],
  answers: BatchAnswer<unknown>[],
  check: (item: P, i: number) => T | Promise<T>,
): Promise<(T & BatchItem)[]> {
  const passed: (T & BatchItem)[] = [];
  for (const [i, item] of items.entries()) {
    try {
      passed.push({ ...(await check(item, i)), i });
    } catch (err) {
      answers[i] = err as Error;
    }
  }
  return passed;
}

/** The items that pass `gate`, in order; an item whose gate throws is answered with what it threw. */
export function keepPassing<T extends BatchItem>(
  items: readonly T[],
  answers: BatchAnswer<unknown>[],
  gate: (item: T, k: number) => void,
): T[] {
  return items.filter((item, k) => {
    try {
      gate(item, k);
      return true;
    } catch (err) {
      answers[item.i] = err as Error;
      return false;
    }
  });
}

/**
 * The items whose posting was not refused (`postEntries`' outcomes, one per item, in order), each
 * with its index among `items`; a refused one is answered with its refusal (a shortfall, a repeat).
 */
export function postedOnly<T extends BatchItem>(
  items: readonly T[],
  outcomes: readonly unknown[],
  answers: BatchAnswer<unknown>[],
): { item: T; k: number }[] {
  return items.flatMap((item, k) => {
    const outcome = outcomes[k];
    if (outcome instanceof Error) {
      answers[item.i] = outcome;
      return [];
    }
    return [{ item, k }];
  });
}

/**
 * The leading items of a call that can be written together: up to the first whose key (its
 * member, its card) an earlier item of the call has, since it depends on that one's outcome (a
 * balance, a day's totals), or for which `keysOf` answers null (it must be written alone anyway).
 * That item is answered `writeAlone`; `end` is the length of the answers the call returns.
 */
export function headOfCall<P>(
  items: readonly P[],
  answers: BatchAnswer<unknown>[],
  keysOf: (item: P) => readonly string[] | null,
): { head: P[]; end: number } {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const keys = keysOf(item);
    if (keys === null || keys.some((key) => seen.has(key))) {
      answers[i] = writeAlone;
      return { head: items.slice(0, i), end: i + 1 };
    }
    for (const key of keys) seen.add(key);
  }
  return { head: [...items], end: items.length };
}

/** Each answer's result made into its view (`view` may read); refusals and `writeAlone` as they are. */
export async function mapAnswers<V, W>(
  answers: readonly BatchAnswer<V>[],
  view: (result: V) => W | Promise<W>,
): Promise<BatchAnswer<W>[]> {
  const out: BatchAnswer<W>[] = [];
  for (const a of answers) {
    if (a instanceof Error || a === writeAlone) out.push(a as Error | typeof writeAlone);
    else out.push(await view(a as V));
  }
  return out;
}

/**
 * A batch effect for a write that may be refused after it wrote (a posting after its row): each
 * item is written behind a savepoint of its own (`writeAlone`), in the batch's transaction, after
 * its merchants' write locks, beside the other writes that arrived with it.
 */
export const eachAlone =
  <P, V>(commit: (trx: Transaction<Database>, plan: P) => Promise<V>) =>
  async (trx: Transaction<Database>, plans: readonly P[], mode: WriteMode): Promise<BatchAnswer<V>[]> =>
    mode.alone ? [await commit(trx, plans[0]!)] : [writeAlone];
