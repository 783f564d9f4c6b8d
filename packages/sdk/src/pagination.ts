/**
 * Cursor pagination over the list envelope `{data, next_cursor, has_more}`.
 * Walks pages until `has_more` is false (never judges by the item count).
 */

import type { ListEnvelope, QueryParams } from './types.js';

export interface PaginateOptions {
  query?: QueryParams;
  onBehalfOf?: string;
  /** Page size sent as `limit` (server default 20, maximum 100). */
  limit?: number;
}

export type PageFetcher = <T>(
  path: string,
  query: QueryParams,
  onBehalfOf: string | undefined,
) => Promise<ListEnvelope<T>>;

export async function* paginate<T>(
  fetchPage: PageFetcher,
  path: string,
  opts: PaginateOptions = {},
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const query: QueryParams = { ...opts.query };
    if (opts.limit !== undefined) query['limit'] = opts.limit;
    if (cursor !== undefined) query['cursor'] = cursor;
    const page = await fetchPage<T>(path, query, opts.onBehalfOf);
    if (page === null || typeof page !== 'object' || !Array.isArray(page.data)) {
      throw new TypeError(`paginate ${path}: response is not a list envelope`);
    }
    for (const item of page.data) yield item;
    if (page.has_more !== true) return;
    const next = page.next_cursor;
    if (typeof next !== 'string' || next === '') {
      throw new TypeError(`paginate ${path}: has_more is true but next_cursor is empty`);
    }
    // An unreadable cursor restarts from the first page on the server; refuse to loop forever.
    if (seen.has(next)) throw new TypeError(`paginate ${path}: next_cursor repeats (${next})`);
    seen.add(next);
    cursor = next;
  }
}
