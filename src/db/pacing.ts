/**
 * Pacing of long work that runs as one chain of promises: the sandbox clock's advance
 * (docs/clock.md, "Bounds") and the background tickers (src/jobs/workers.ts).
 *
 * The embedded database answers without I/O: a query's promise resolves in a microtask, so work
 * that only awaits the database never lets the event loop turn. Nothing else in the process then
 * runs: no socket is read, no other request starts, and the database's one connection goes to
 * nobody else, however often the work releases it. A pacer makes such work give the event loop a
 * turn (`setImmediate`: pending I/O first) once it has run a slice of time without one.
 */
import { ConnectionBuilder, ControlledTransactionBuilder, Kysely, Transaction, TransactionBuilder } from 'kysely';

export class Pacer {
  /** When the event loop last turned, as far as this pacer saw (its own turns and the marker's). */
  private since = performance.now();
  /** A marker is waiting for the next turn of the event loop: a turn the work got anyway (it awaited I/O) counts too.
   * */
  private armed = false;
  /** The longest stretch of work without a turn so far, in milliseconds (for the advance's log). */
  longestMs = 0;

  constructor(readonly sliceMs: number) {}

  /** Gives the event loop a turn when the work has run `sliceMs` since the last one; otherwise goes on at once. */
  async pace(): Promise<void> {
    const ran = performance.now() - this.since;
    if (ran > this.longestMs) this.longestMs = ran;
    if (ran < this.sliceMs) {
      if (!this.armed) {
        this.armed = true;
        setImmediate(() => {
          this.armed = false;
          this.since = performance.now();
        });
      }
      return;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

type Builder = TransactionBuilder<unknown> | ControlledTransactionBuilder<unknown> | ConnectionBuilder<unknown>;
const isBuilder = (value: unknown): value is Builder =>
  value instanceof TransactionBuilder ||
  value instanceof ControlledTransactionBuilder ||
  value instanceof ConnectionBuilder;

/** Methods called on the object itself (Kysely's classes keep their state in private fields, which a proxy has not). */
function bound(target: object, prop: string | symbol): unknown {
  const value: unknown = Reflect.get(target, prop, target);
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
}

/** A builder whose `execute` waits for the pacer first; what its other methods answer is paced the same way. */
function pacedBuilder<T extends Builder>(builder: T, pacer: Pacer): T {
  return new Proxy(builder, {
    get(target, prop) {
      const value = bound(target, prop);
      if (typeof value !== 'function') return value;
      if (prop === 'execute') {
        return async (...args: unknown[]) => {
          await pacer.pace();
          return (value as (...a: unknown[]) => unknown)(...args);
        };
      }
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown)(...args);
        if (isBuilder(result)) return pacedBuilder(result, pacer);
        // withPlugin, withSchema, withTables: another handle on the same database, paced too.
        if (result instanceof Kysely && !(result instanceof Transaction)) return pacedDb(result, pacer);
        return result;
      };
    },
  });
}

/**
 * The same database handle, except that each transaction (and each `connection()`) starts only
 * after `pacer.pace()`: code handed this handle gives the event loop a turn between two of its
 * transactions whenever it has run a slice, never inside one (so a turn never holds the
 * connection). A statement run outside a transaction is not paced: the caller paces between them.
 * Everything else is the handle's own (the adapter, plugins and caches keyed by it included).
 */
export function pacedDb<DB>(db: Kysely<DB>, pacer: Pacer): Kysely<DB> {
  return new Proxy(db, {
    get(target, prop) {
      const value = bound(target, prop);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown)(...args);
        if (isBuilder(result)) return pacedBuilder(result, pacer);
        // withPlugin, withSchema, withTables: another handle on the same database, paced too.
        if (result instanceof Kysely && !(result instanceof Transaction)) return pacedDb(result, pacer);
        return result;
      };
    },
  });
}
