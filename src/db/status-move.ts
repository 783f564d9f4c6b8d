import type { AliasedRawBuilder, Kysely, RawBuilder, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * A row's move from one status to another. Every table whose rows move has these columns: each
 * change of status is one status version (what events and webhooks are merged by) and stamps
 * updated_at.
 */
interface StatusColumns {
  id: string;
  status: string;
  status_version: number;
  updated_at: Date;
}

/** The table seen through its status columns (the SQL names the real table). */
const statusTablesOf = (trx: Transaction<Database>) => trx as unknown as Kysely<Record<string, StatusColumns>>;

export interface StatusMove {
  /** The status (or statuses) the row may leave: the claim's WHERE. */
  from: string | readonly string[];
  to: string;
  /** The time of the move (updated_at): a time, or SQL such as the merchant's own clock. */
  at: Date | RawBuilder<Date>;
  /** The move's own columns (`executed_at`, `next_accrual_at: null`, …). */
  set?: Record<string, unknown>;
  /** More columns the moved row is answered with (read by the same statement: `(SELECT …) AS name`). */
  returning?: readonly AliasedRawBuilder<unknown, string>[];
}

/**
 * Claims a move in one conditional UPDATE (of concurrent callers only one sees the row in a
 * status it may leave): the new status, status_version + 1, updated_at and the move's own
 * columns. The moved row, or undefined when the row was not in `from`.
 */
export async function claimStatusMove<Row>(
  trx: Transaction<Database>,
  table: string,
  id: string,
  move: StatusMove,
): Promise<Row | undefined> {
  const from = typeof move.from === 'string' ? [move.from] : [...move.from];
  const moved = await statusTablesOf(trx)
    .updateTable(table)
    .set((eb) => ({
      ...move.set,
      status: move.to,
      status_version: eb('status_version', '+', 1),
      updated_at: move.at,
    }))
    .where('id', '=', id)
    .where('status', 'in', from)
    .returningAll()
    .$if(move.returning !== undefined && move.returning.length > 0, (q) => q.returning(move.returning!))
    .executeTakeFirst();
  return moved as Row | undefined;
}

/**
 * The columns of a move to `to` of a row already read and locked: the new status, the next status
 * version and the time of the change. For an update's values: `{ ...statusMove(card, 'expired', now), ... }`.
 */
export const statusMove = <S extends string>(row: { status_version: number }, to: S, now: Date) => ({
  status: to,
  status_version: row.status_version + 1,
  updated_at: now,
});
