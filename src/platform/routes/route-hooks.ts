/** Route-level hooks that the base app and the pipeline attach in `onRoute` (http-app.ts, pipeline.ts). */

/** The request checks of each base app (createBaseApp): a route's first `onRequest` hook. */
export const firstChecks = new WeakSet<object>();

/** A route's own hooks of one kind, as a list. */
export function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/**
 * `hook` ahead of a route's other `onRequest` hooks, behind the base app's request checks (which
 * stay first: the request id and the text check come before anything reads the request).
 */
export function withOnRequestFirst<T>(hooks: T | T[] | undefined, hook: T): T[] {
  const list = hooksOf(hooks);
  const base = list.length > 0 && firstChecks.has(list[0] as object) ? 1 : 0;
  return [...list.slice(0, base), hook, ...list.slice(base)];
}
