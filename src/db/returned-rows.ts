import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * The rows a batch's statement returned (an insert or an update `RETURNING`, in no promised order)
 * put in the order of what was sent, matched by id: each item's row, item by item. A row missing is
 * a bug (the statement wrote every item or failed): it throws.
 */
export function inOrderOf<R extends { id: string }>(sent: readonly { id: string }[], rows: readonly R[]): R[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return sent.map(({ id }) => {
    const row = byId.get(id);
    if (!row) throw new Error(`no row returned for ${id}`);
    return row;
  });
}

/** A batch's new rows of one table in one statement, answered in the order given (`inOrderOf`). */
export async function insertInOrder<T extends keyof Database & string>(
  trx: Transaction<Database>,
  table: T,
  values: readonly (Insertable<Database[T]> & { id: string })[],
): Promise<Selectable<Database[T]>[]> {
  if (values.length === 0) return [];
  // The table is a parameter: Kysely cannot follow its row types through a generic name.
  const rows = (await (trx as unknown as Kysely<Record<string, { id: string }>>)
    .insertInto(table)
    .values(values as never)
    .returningAll()
    .execute()) as unknown as (Selectable<Database[T]> & { id: string })[];
  return inOrderOf(values, rows);
}
