import { sql, type RawBuilder } from 'kysely';

/**
 * `(a, b, …) IN (the given rows)` for a query's `where`, the rows sent as one text array per
 * column (a parameter each, whatever their number: one statement plan for any batch):
 * `.where(inRows(['environment', 'asset'], transfers.map((t) => [t.environment, t.asset])))`.
 */
export function inRows(columns: readonly string[], rows: readonly (readonly string[])[]): RawBuilder<boolean> {
  const arrays = columns.map((_, c) => sql`${rows.map((row) => row[c])}::text[]`);
  return sql<boolean>`(${sql.join(columns.map((c) => sql.ref(c)))}) IN (SELECT * FROM unnest(${sql.join(arrays)}))`;
}
