import { Type, type Static } from 'typebox';

export const pageSizeDefault = 20;
export const pageSizeMax = 100;

export const PageQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `default ${pageSizeDefault}, at most ${pageSizeMax} (larger values are capped)`,
    }),
  ),
  // No length bound: a cursor that cannot be read, however long, restarts from the first page
  // (the reference's rule), never 400. The request line's own limit (16 KiB of headers) bounds it.
  cursor: Type.Optional(
    Type.String({ description: "the previous page's next_cursor; an unreadable cursor restarts from the first page" }),
  ),
});

/** A page of `item`s; a named item (`title`, openapi-schemas.ts) names its page `<title>List` in the OpenAPI document.
 * */
export const listEnvelope = <T extends Parameters<typeof Type.Array>[0]>(item: T) => {
  const title = (item as { title?: unknown }).title;
  return Type.Object(
    { data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]), has_more: Type.Boolean() },
    typeof title === 'string' ? { title: `${title}List` } : {},
  );
};

/**
 * The envelope of a list answered whole, never paged (the asset catalogue, a merchant's BINs): the
 * list envelope's fields with `next_cursor` always null; `title` names it in the OpenAPI document.
 */
export const wholeList = <T extends Parameters<typeof Type.Array>[0]>(item: T, title?: string) =>
  Type.Object({ data: Type.Array(item), next_cursor: Type.Null(), has_more: Type.Boolean() }, title ? { title } : {});

export interface ListEnvelope<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}

export function pageSize(limit: number | undefined): number {
  if (limit === undefined || !Number.isInteger(limit) || limit < 1) return pageSizeDefault;
  return Math.min(limit, pageSizeMax);
}

/**
 * Keyset cursors over a table's `seq` (a bigserial in insertion order). Pages walk newest first;
 * an insert never shifts a page, so nothing is lost or repeated. The cursor is opaque to clients.
 */
export function encodeCursor(seq: bigint | string): string {
  return Buffer.from(`v1:${seq}`, 'utf8').toString('base64url');
}

/** Largest `seq` a cursor can carry: the bigint (int8) column's maximum. */
export const cursorSeqMax = 2n ** 63n - 1n;

/**
 * undefined for an absent or unreadable cursor: the walk restarts from the first page (the
 * reference's rule). A number beyond `cursorSeqMax` is unreadable too: no row can be past it.
 */
export function decodeCursor(cursor: string | undefined): bigint | undefined {
  if (!cursor) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^v1:(\d{1,19})$/.exec(text);
  if (!m) return undefined;
  const seq = BigInt(m[1]!);
  return seq <= cursorSeqMax ? seq : undefined;
}

/** Call with rows fetched as `limit + 1`, ordered by seq descending. */
export function toPage<R extends { seq: bigint | string }, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): ListEnvelope<T> {
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(map), next_cursor: hasMore && last ? encodeCursor(last.seq) : null, has_more: hasMore };
}

/** What a list request asks: the page size and the previous page's cursor (both optional). */
export interface PageParams {
  limit?: number;
  cursor?: string;
}

/** Rows a keyset page walks: each carries its table's `seq`. */
export type KeysetRow = { seq: bigint | string };

/** The same page with each item mapped (for views that need something looked up per page first). */
export function mapPage<R, T>(page: ListEnvelope<R>, view: (row: R) => T): ListEnvelope<T> {
  return { ...page, data: page.data.map(view) };
}

export function constantList<T>(data: T[]): ListEnvelope<T> {
  return { data, next_cursor: null, has_more: false };
}

export type PageQueryType = Static<typeof PageQuery>;

/**
 * How a cursor writes a row's `seq` when the sequence itself must stay private (it would tell how
 * many rows all merchants made): a bijection onto positive numbers and its inverse, which answers
 * undefined for a number no row can have (the cursor is then unreadable).
 */
export interface CursorSeqCodec {
  encode(seq: bigint | string): bigint;
  decode(n: bigint): bigint | undefined;
}

export const plainSeq: CursorSeqCodec = { encode: (seq) => BigInt(seq), decode: (n) => n };

/**
 * A keyset walk with one leading group before `seq` (e.g. favourites first, then newest): rows
 * ordered by `group` descending (a boolean column: true first), then `seq` descending. The cursor
 * carries both (`v1g:<0|1>:<number>`, the number `seq` through `codec`); an unreadable one
 * restarts from the first page, as above.
 */
export function encodeGroupedCursor(group: boolean, seq: bigint | string, codec: CursorSeqCodec = plainSeq): string {
  return Buffer.from(`v1g:${group ? 1 : 0}:${codec.encode(seq)}`, 'utf8').toString('base64url');
}

export function decodeGroupedCursor(
  cursor: string | undefined,
  codec: CursorSeqCodec = plainSeq,
): { group: boolean; seq: bigint } | undefined {
  if (!cursor) return undefined;
  const m = /^v1g:([01]):(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) return undefined;
  const n = BigInt(m[2]!);
  const seq = n <= cursorSeqMax ? codec.decode(n) : undefined;
  return seq === undefined ? undefined : { group: m[1] === '1', seq };
}
