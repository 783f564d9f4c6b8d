import { sql, type SelectQueryBuilder } from 'kysely';
import {
  decodeCursor,
  decodeGroupedCursor,
  encodeGroupedCursor,
  pageSize,
  plainSeq,
  toPage,
  type CursorSeqCodec,
  type KeysetRow,
  type ListEnvelope,
  type PageParams,
} from '../platform/routes/pagination.js';

/**
 * The keyset walks every list's query goes through (the page rules, cursors and envelope are
 * platform/routes/pagination.ts): query-builder utilities that the areas' queries hand their filtered
 * select to.
 */

/**
 * The one keyset list: `query` (a select with the caller's filters applied, not yet ordered or
 * limited) is walked newest first by `seq`, starting after the page's cursor, fetching
 * `limit + 1` rows to know whether more follow; the answer is the list envelope, each row through
 * `view`. Every list in the API goes through here (docs/architecture.md).
 */
export async function keysetPage<DB, TB extends keyof DB, O extends KeysetRow>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageParams,
): Promise<ListEnvelope<O>>;
export async function keysetPage<DB, TB extends keyof DB, O extends KeysetRow, T>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageParams,
  view: (row: O) => T,
): Promise<ListEnvelope<T>>;
export async function keysetPage<DB, TB extends keyof DB, O extends KeysetRow, T>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageParams,
  view?: (row: O) => T,
): Promise<ListEnvelope<O | T>> {
  const limit = pageSize(page.limit);
  const after = decodeCursor(page.cursor);
  const seq = sql.ref('seq');
  const walk = after === undefined ? query : query.where(sql<boolean>`${seq} < ${after.toString()}`);
  const rows = (await walk
    .orderBy(seq, 'desc')
    .limit(limit + 1)
    .execute()) as O[];
  return toPage<O, O | T>(rows, limit, view ?? ((row) => row));
}

/**
 * A page whose rows each become a view that reads the database, awaited one after the other (the
 * page's order kept, one query at a time on the caller's connection).
 */
export async function viewPage<R, T>(page: ListEnvelope<R>, view: (row: R) => Promise<T>): Promise<ListEnvelope<T>> {
  const data: T[] = [];
  for (const row of page.data) data.push(await view(row));
  return { ...page, data };
}

export async function groupedKeysetPage<DB, TB extends keyof DB, O extends KeysetRow, T>(
  query: SelectQueryBuilder<DB, TB, O>,
  groupColumn: string,
  groupOf: (row: O) => boolean,
  page: PageParams,
  view: (row: O) => T,
  codec: CursorSeqCodec = plainSeq,
): Promise<ListEnvelope<T>> {
  const limit = pageSize(page.limit);
  const after = decodeGroupedCursor(page.cursor, codec);
  const seq = sql.ref('seq');
  const group = sql.ref(groupColumn);
  const walk =
    after === undefined
      ? query
      : query.where(sql<boolean>`(${group}::int, ${seq}) < (${after.group ? 1 : 0}, ${after.seq.toString()}::bigint)`);
  const rows = (await walk
    .orderBy(group, 'desc')
    .orderBy(seq, 'desc')
    .limit(limit + 1)
    .execute()) as O[];
  const hasMore = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(view),
    next_cursor: hasMore && last ? encodeGroupedCursor(groupOf(last), last.seq, codec) : null,
    has_more: hasMore,
  };
}
