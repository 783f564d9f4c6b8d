import { CompiledQuery, type Kysely } from 'kysely';

type Runner = (text: string, values: readonly unknown[]) => Promise<{ rows: unknown[] }>;

/** The pool under each handle opened by `openDatabase`, by the dialect adapter its `Kysely` instances share. */
const runners = new WeakMap<object, Runner>();

export function registerDirectRunner(db: Kysely<any>, run: Runner): void {
  runners.set(db.getExecutor().adapter, run);
}

/**
 * Runs a read statement of constant text on the handle's pool directly (prepared, as every data
 * statement), not through Kysely's executor: for the hottest reads (the member's balances), where
 * the executor's connection provider, result plugins and promise chain were a few per cent of the
 * request's CPU. Only for reads: Kysely's plugins (the member and asset write watchers) do not see
 * the statement. Inside a transaction, or on a handle not opened by `openDatabase`, it goes
 * through Kysely as before, so it always runs where it was asked to.
 */
export async function readRows<R>(db: Kysely<any>, text: string, values: readonly unknown[]): Promise<R[]> {
  const run = db.isTransaction ? undefined : runners.get(db.getExecutor().adapter);
  if (run) return (await run(text, values)).rows as R[];
  return (await db.executeQuery<R>(CompiledQuery.raw(text, values as unknown[]))).rows;
}
