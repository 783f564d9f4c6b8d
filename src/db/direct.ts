import { CompiledQuery, type Kysely } from 'kysely';
import { TurnBatcher } from './turn-batch.js';

type Runner = (text: string, values: readonly unknown[]) => Promise<{ rows: unknown[] }>;

/**
 * The pool under each handle opened by `openDatabase`, by the dialect adapter its `Kysely` instances
 * share: keyed reads go to it directly, not through Kysely's executor (its connection provider,
 * result plugins and promise chain were a few per cent of a read's CPU). Only reads: Kysely's
 * plugins (the member and asset write watchers) do not see these statements.
 */
const runners = new WeakMap<object, Runner>();

export function registerDirectRunner(db: Kysely<any>, run: Runner): void {
  runners.set(db.getExecutor().adapter, run);
}

interface KeyedRead {
  text: string;
  fixed: readonly unknown[];
  /** `fixed` as text: reads with the same text and fixed values share a statement. */
  group: string;
  key: string;
  keyColumn: string;
}

/** Most reads in one batch (so at most as many keys in one statement). */
const keyedReadBatchMax = 100;
/** A statement's rows for one read, or its statement's error (a failing statement fails only its own reads). */
type KeyedRows = unknown[] | Error;
const keyedReaders = new WeakMap<object, TurnBatcher<KeyedRead, KeyedRows>>();

function keyedReader(adapter: object, run: Runner): TurnBatcher<KeyedRead, KeyedRows> {
  let reader = keyedReaders.get(adapter);
  if (!reader) {
    reader = new TurnBatcher(async (reads) => {
      const groups = new Map<string, KeyedRead[]>();
      for (const read of reads) {
        const id = `${read.text}\u0000${read.group}`;
        const group = groups.get(id);
        if (group) group.push(read);
        else groups.set(id, [read]);
      }
      const rowsByRead = new Map<KeyedRead, KeyedRows>();
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const { text, fixed, keyColumn } = group[0]!;
          const keys = [...new Set(group.map((r) => r.key))];
          const byKey = new Map<string, unknown[]>(keys.map((k) => [k, []]));
          let rows: unknown[];
          try {
            ({ rows } = await run(text, [...fixed, keys]));
          } catch (err) {
            for (const read of group) rowsByRead.set(read, err instanceof Error ? err : new Error(String(err)));
            return;
          }
          for (const row of rows) byKey.get(String((row as Record<string, unknown>)[keyColumn]))?.push(row);
          // The same key read twice in one turn: each caller gets an array of its own.
          const given = new Set<string>();
          for (const read of group) {
            const rows = byKey.get(read.key)!;
            rowsByRead.set(read, given.has(read.key) ? [...rows] : rows);
            given.add(read.key);
          }
        }),
      );
      return reads.map((read) => rowsByRead.get(read)!);
    }, keyedReadBatchMax);
    keyedReaders.set(adapter, reader);
  }
  return reader;
}

/**
 * A read of one key's rows through a statement that reads many keys: `text` takes the `fixed`
 * values, then the keys as its last parameter (`$n::text[]`), and returns each row's key in
 * `keyColumn`. Outside a transaction, the reads of one turn of the event loop with the same text
 * and fixed values are one statement on the pool (issue 16: concurrent authenticated reads share a
 * round trip, the driver's work per query and PostgreSQL's per statement); each caller gets its
 * own key's rows, in the statement's order. Inside a transaction it runs alone, in it.
 */
export async function readRowsByKey<R>(
  db: Kysely<any>,
  text: string,
  fixed: readonly unknown[],
  key: string,
  keyColumn: keyof R & string,
): Promise<R[]> {
  const run = db.isTransaction ? undefined : runners.get(db.getExecutor().adapter);
  if (!run) return (await db.executeQuery<R>(CompiledQuery.raw(text, [...fixed, [key]]))).rows;
  const rows = await keyedReader(db.getExecutor().adapter, run).add({
    text,
    fixed,
    group: JSON.stringify(fixed),
    key,
    keyColumn,
  });
  if (rows instanceof Error) throw rows;
  return rows as R[];
}

/** Turns run together (`batches`, one statement per text and fixed values in each) and reads answered (`items`) by
 * `readRowsByKey` on this handle since start-up, for /metrics. */
export function keyedReadStats(db: Kysely<any>): { readonly batches: number; readonly items: number } {
  const adapter = db.getExecutor().adapter;
  const run = runners.get(adapter);
  return run ? keyedReader(adapter, run).stats : { batches: 0, items: 0 };
}
