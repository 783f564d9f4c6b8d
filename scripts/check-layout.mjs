// The layout rules Prettier does not enforce (docs/code-style.md): no line over 120 characters in
// the source, the tests, the packages, the scripts and the stored functions (Prettier leaves long
// strings, comments and SQL as they are), and no source file over 300 lines whose first line does
// not say why ("// Over 300 lines: ..."). Migrations are held to both (their long lines were
// wrapped once, the schema they build checked identical).
//
//   node scripts/check-layout.mjs    exit 1 with every breach listed
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const lineMax = 120;
const fileLinesMax = 300;
const roots = [
  'src',
  'test',
  'bench',
  'scripts',
  'packages/sdk/src',
  'packages/sdk/test',
  'packages/cli/src',
  'packages/cli/test',
];
const checked = /\.(ts|mts|cts|mjs|cjs|js|sql)$/;
const skipped = [/\/generated\//, /\/node_modules\//, /\/dist\//];

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

const breaches = [];
for (const top of roots) {
  for (const path of walk(join(root, top))) {
    const file = relative(root, path);
    if (!checked.test(file) || skipped.some((s) => s.test(file))) continue;
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.length > lineMax) breaches.push(`${file}:${i + 1}: ${line.length} characters (at most ${lineMax})`);
    });
    const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
    if (
      file.startsWith('src/') &&
      file.endsWith('.ts') &&
      count > fileLinesMax &&
      !/^\/\/ Over 300 lines: \S/.test(lines[0])
    ) {
      breaches.push(`${file}: ${count} lines without a first line "// Over 300 lines: <why>"`);
    }
  }
}
for (const b of breaches) console.error(b);
if (breaches.length) {
  console.error(`${breaches.length} layout breaches (docs/code-style.md)`);
  process.exit(1);
}
console.log('layout: no line over 120 characters, every source file over 300 lines says why');
