#!/usr/bin/env node
// Builds a publishable workspace package (packages/sdk; packages/cli later) into <dir>/dist:
//
//   dist/esm/<entry>.js    ES module   + dist/esm/*.d.ts   (types of `import`)
//   dist/cjs/<entry>.cjs   CommonJS    + dist/cjs/*.d.cts  (types of `require`)
//
// Usage: node scripts/build-package.mjs <package dir> [src/<entry>.ts ...]   (default: src/index.ts)
//
// The JavaScript is one esbuild bundle per entry and format (the package's own modules inlined,
// its dependencies left as imports: they are installed beside it). The declarations come from
// tsc (`<dir>/tsconfig.build.json`, emitDeclarationOnly into dist/esm); the CommonJS copy renames
// them .d.cts and points their relative imports at .cjs, so that TypeScript reads a `require`
// consumer's types as CommonJS (a .d.ts next to a "type": "module" package.json would be taken
// for ESM: attw's "masquerading as ESM").
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const [dirArg, ...entryArgs] = process.argv.slice(2);
if (!dirArg) {
  console.error('usage: node scripts/build-package.mjs <package dir> [src/<entry>.ts ...]');
  process.exit(2);
}
const dir = resolve(dirArg);
const entries = entryArgs.length ? entryArgs : ['src/index.ts'];
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const node = /(\d+(?:\.\d+)*)/.exec(pkg.engines?.node ?? '')?.[1] ?? '20';
const dist = join(dir, 'dist');

rmSync(dist, { recursive: true, force: true });

const common = {
  absWorkingDir: dir,
  entryPoints: entries,
  bundle: true,
  platform: 'node',
  target: `node${node}`,
  // Dependencies (and node: built-ins) stay imports; only the package's own sources are bundled.
  packages: 'external',
  // Class and function names survive (error classes are told apart by name in logs).
  keepNames: true,
  sourcemap: true,
  sourcesContent: true,
  logLevel: 'warning',
  tsconfig: join(dir, 'tsconfig.build.json'),
};
await build({ ...common, format: 'esm', outdir: join(dist, 'esm'), outExtension: { '.js': '.js' } });
await build({ ...common, format: 'cjs', outdir: join(dist, 'cjs'), outExtension: { '.js': '.cjs' } });

const tsc = spawnSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// dist/esm/**/*.d.ts → dist/cjs/**/*.d.cts, relative specifiers './x.js' → './x.cjs'.
function copyDeclarations(from, to) {
  mkdirSync(to, { recursive: true });
  for (const ent of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, ent.name);
    if (ent.isDirectory()) {
      copyDeclarations(src, join(to, ent.name));
    } else if (ent.name.endsWith('.d.ts')) {
      const text = readFileSync(src, 'utf8').replace(
        /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]*?)\.js(['"])/g,
        '$1$2.cjs$3',
      );
      writeFileSync(join(to, basename(ent.name, '.d.ts') + '.d.cts'), text);
    }
  }
}
copyDeclarations(join(dist, 'esm'), join(dist, 'cjs'));

console.log(`built ${relative(root, dir) || '.'} (${entries.join(', ')}) into ${relative(root, dist)}`);
