// SQL lives only in its homes (issue 38, point 1; docs/architecture.md "Where a change goes"): a
// file named `queries.ts` or `tables.ts`, a `queries/` folder, or `src/db/`. Elsewhere no Kysely
// query builder call (`selectFrom`, `insertInto`, ...), no `sql` template and no SQL text. The
// dependency rule (.dependency-cruiser.cjs, "sql-only-in-queries") keeps runtime imports of
// `kysely` to the same files; this check sees the builder calls, which need no import (they are
// methods of the handle a function is given).
//
//   node scripts/check-sql-homes.mjs [path prefix ...]    exit 1 with every breach listed
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
export const sqlHome = /(^|\/)(queries|tables)\.ts$|\/queries\/[^/]+\.ts$|^src\/db\//;
const patterns = [
  [/\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto|selectNoFrom)\(/, 'a query builder call'],
  [/\bsql(<[^`]*>)?`|\bsql<|\bsql\.(raw|ref|join|lit|id|table|val)\(/, 'a sql template'],
  [/['"`]\s*(SELECT\s.+\sFROM\s|INSERT INTO\s|UPDATE\s+\w+\s+SET\s|DELETE FROM\s)/, 'SQL text'],
];

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (path.endsWith('.ts')) yield path;
  }
}

const prefixes = process.argv.slice(2);
const breaches = [];
for (const path of walk(join(root, 'src'))) {
  const file = relative(root, path);
  if (sqlHome.test(file)) continue;
  if (prefixes.length && !prefixes.some((p) => file.startsWith(p))) continue;
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return;
      for (const [pattern, what] of patterns) {
        if (pattern.test(line)) {
          breaches.push(`${file}:${i + 1}: ${what} outside queries.ts / tables.ts / db/`);
          break;
        }
      }
    });
}
for (const b of breaches) console.error(b);
if (breaches.length) {
  const files = new Set(breaches.map((b) => b.split(':')[0]));
  console.error(
    `${breaches.length} SQL lines in ${files.size} files outside their homes (scripts/check-sql-homes.mjs)`,
  );
  process.exit(1);
}
console.log('SQL homes: every query is in a queries.ts, a tables.ts, a queries/ folder or src/db/');
