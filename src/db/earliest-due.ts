import { sql, type Expression, type SelectQueryBuilder } from 'kysely';
import type { Database } from './schema.js';

/**
 * A timed process's `nextDue` (src/jobs/types.ts): the earliest `due` (a column or an expression
 * of the rows) among the rows `query` selects, the scope's filters already applied; null when
 * there is none.
 */
export async function earliestDue(
  query: SelectQueryBuilder<Database, any, object>,
  due: Expression<unknown> | string,
): Promise<Date | null> {
  const at = typeof due === 'string' ? sql.ref(due) : due;
  const row = await query.select(sql<Date | null>`min(${at})`.as('due')).executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/**
 * A timed process's `runDue` batch: the rows `query` selects whose `due` (a column) has come at
 * `now`, the earliest first, at most `limit`; the pair of `earliestDue` on the same query.
 */
export function dueFirst<QB extends SelectQueryBuilder<Database, any, any>>(
  query: QB,
  due: string,
  now: Date,
  limit: number,
): QB {
  const at = sql.ref(due);
  return query.where(at, '<=', now).orderBy(at).limit(limit) as QB;
}
