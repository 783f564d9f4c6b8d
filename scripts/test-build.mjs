// The tests' TypeScript, compiled once per run into plain JavaScript that Node loads without a
// loader. Running a test file through tsx costs ~5 s of CPU per process on this machine, most of it
// not in compiling: Node 20 sends every module of the process (our ~150 sources, and ~650 of
// kysely's and typebox's files) through the loader's hook thread and back. A bundle of the same
// sources, its packages left as ordinary imports, loads in a fraction of that.
//
// Used by `npm test` (scripts/run-tests.mjs: every test file, the per-file database preload and
// src/main.ts, in one build) and by test/support/process.ts (src/main.ts alone, when a test file
// that starts the service as a process runs on its own under tsx).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

export const root = fileURLToPath(new URL('..', import.meta.url));
const nodeTestShim = join(root, 'test/support/node-test.ts');

/**
 * A fresh folder for one build, inside the repository (under node_modules/.cache, ignored by git)
 * so that the bundles' imports of packages resolve to the project's node_modules as the sources'
 * do. Removed when this process exits; folders of builders that died without removing theirs
 * (interrupted runs) are removed by the next one.
 */
export function newBuildDir(prefix) {
  const parent = join(root, 'node_modules/.cache/mwa-test-build');
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent)) {
    const pid = Number(/^[a-z]+-(\d+)-/.exec(name)?.[1]);
    if (pid && !processAlive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(parent, `${prefix}-${process.pid}-`));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Bundles `entryPoints` (paths relative to the repository) into `outdir`, keeping their relative
 * paths (`test/x.test.ts` → `<outdir>/test/x.test.mjs`). Code shared by several entry points goes
 * into shared chunks, so that a process holds one instance of each source module, as under tsx.
 *
 * What stays as it was under tsx:
 * - packages are not bundled: they load from node_modules as before (pglite finds its wasm,
 *   playwright its files); the SDK workspace package is TypeScript source and is bundled;
 * - `import.meta.url` of a source is its own file's URL, not the bundle's, so paths computed from
 *   it (the repository root in test/support) are unchanged;
 * - function and class names are kept (`keepNames`), whatever bundling renames;
 * - source maps link every line to its TypeScript source (`node --enable-source-maps`).
 */
export async function bundleForTests({ entryPoints, outdir }) {
  await build({
    absWorkingDir: root,
    entryPoints,
    outdir,
    outbase: '.',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    keepNames: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [
      {
        name: 'mwa-test-sources',
        setup(b) {
          // The test files' node:test is support/node-test.ts (node:test itself, recording the
          // file's top-level registrations while a pooled worker loads it); that module's is Node's.
          b.onResolve({ filter: /^node:test$/ }, (args) =>
            args.importer === nodeTestShim ? { external: true } : { path: nodeTestShim },
          );
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@merchant-wallet/') ? undefined : { external: true },
          );
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            if (relative(root, args.path).startsWith('node_modules')) return undefined;
            const text = readFileSync(args.path, 'utf8');
            return {
              contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
              loader: 'ts',
            };
          });
        },
      },
    ],
  });
}

let flags;

/**
 * Node's flags for the test processes and the service processes they start:
 * - `--enable-source-maps`: stack traces name the TypeScript sources' lines, not the bundle's;
 * - `--liftoff-only`: WebAssembly runs on V8's baseline compiler (Liftoff) only. By default V8
 *   recompiles the hot functions of the embedded PostgreSQL (PGlite, 9 MB of WebAssembly) with
 *   its optimising compiler on background threads; in a process that lives a few seconds, as a
 *   test file's does, that compilation costs more CPU than the faster code saves: a test file with
 *   one service uses ~25-30% less CPU without it. What the code does is the same either way. Left
 *   out where the Node in use does not know the flag (V8 keeps it for testing).
 * - `--max-semi-space-size=32`: a larger young generation (MB), so the many short-lived objects of
 *   service start-ups and requests are collected in fewer scavenges: ~5-7 % less CPU over a set
 *   of the heaviest files, in alternating runs (only the collector's work changes).
 */
export function testNodeFlags() {
  flags ??= [
    '--enable-source-maps',
    '--max-semi-space-size=32',
    ...['--liftoff-only'].filter((f) => spawnSync(process.execPath, [f, '-e', ''], { stdio: 'ignore' }).status === 0),
  ];
  return flags;
}

/** Where `bundleForTests` writes an entry point: `test/x.test.ts` → `<outdir>/test/x.test.mjs`. */
export function bundledPath(outdir, entryPoint) {
  return join(outdir, entryPoint.replace(/\.ts$/, '.mjs'));
}
