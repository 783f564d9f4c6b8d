import { sql, type RawBuilder } from 'kysely';

/**
 * `(a, b, …) IN (the given rows)` for a query's `where`, the rows sent as one array per column (a
 * parameter each, whatever their number: one statement plan for any batch), of type `text` unless
 * `types` names another for a column:
 * `.where(inRows(['environment', 'asset'], transfers.map((t) => [t.environment, t.asset])))`.
 */
export function inRows(
  columns: readonly string[],
  rows: readonly (readonly string[])[],
  types: Readonly<Record<string, 'date'>> = {},
): RawBuilder<boolean> {
  const arrays = columns.map((column, c) => sql`${rows.map((row) => row[c])}::${sql.raw(types[column] ?? 'text')}[]`);
  return sql<boolean>`(${sql.join(columns.map((c) => sql.ref(c)))}) IN (SELECT * FROM unnest(${sql.join(arrays)}))`;
}
