// `npm run build`: the server compiled into dist/ (docs/deployment.md).
//
//   node scripts/build.mjs [--outdir DIR]     (default: dist/ of this repository)
//
// (`--entry FILE` builds another entry point instead of src/main.ts: test/build.test.ts uses it.)
//
// One ES module, dist/main.js (and its source map), bundled from src/main.ts by esbuild. The
// packages stay ordinary imports from node_modules, so a production install needs only the
// `dependencies` of package.json: the build fails when the server imports any other package (a dev
// dependency such as tsx would be missing in production). Nothing else is read from the source
// tree at run time: the migrations are modules listed in src/db/migrate.ts, the stored functions'
// files (src/db/functions/*.sql) are put into the bundle as text (`storedFunctionsPlugin`), the
// console's and the hosted screens' pages are strings in their modules, the docs page's script
// comes from a package.
//
// dist/build-info.json records a hash of the sources it was built from; `npm start`
// (scripts/start.mjs) rebuilds when the sources no longer match it.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const defaultOutdir = join(root, 'dist');
const entryPoint = 'src/main.ts';
const thisFile = fileURLToPath(import.meta.url);

/** Every file under src/, in a stable order. */
function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk(join(root, 'src'));
  return files;
}

/**
 * A hash of what the build is made from: every file under src/ (name and content), this script,
 * and package.json (its dependencies decide what may stay external). Content, not modification
 * times: a checkout or a copy changes times without changing the sources.
 */
export function sourceHash() {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(), thisFile, join(root, 'package.json')]) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Whether `outdir` holds a build of the current sources. */
export function buildIsCurrent(outdir = defaultOutdir) {
  try {
    const info = JSON.parse(readFileSync(join(outdir, 'build-info.json'), 'utf8'));
    readFileSync(join(outdir, 'main.js'));
    return info.sourceHash === sourceHash();
  } catch {
    return false;
  }
}

/**
 * src/db/function-files.ts reads the stored functions' files from its folder at run time (tsx, the
 * tests); in the bundle it is a module holding their texts instead, read here at build time.
 */
const functionFilesModule = join(root, 'src/db/function-files.ts');
const storedFunctionsPlugin = {
  name: 'mwa-stored-functions',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]db[\\/]function-files\.ts$/ }, (args) => {
      if (resolve(args.path) !== functionFilesModule) return undefined;
      const dir = join(root, 'src/db/functions');
      const files = readdirSync(dir)
        .filter((file) => file.endsWith('.sql'))
        .sort()
        .map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }));
      return {
        contents:
          `const files = ${JSON.stringify(files)};\nexport function functionFiles() { return files.map((f) => ` +
          `({ ...f })); }\n`,
        loader: 'js',
        watchDirs: [dir],
      };
    });
  },
};

/** The package an import names (`@scope/name/sub.js` → `@scope/name`), or undefined for a builtin or a relative path.
 * */
function packageOf(specifier) {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier) || /^[./]/.test(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export async function buildServer({ outdir = defaultOutdir, entry = entryPoint } = {}) {
  const { build, version } = await import('esbuild');
  const hash = sourceHash();
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: join(outdir, 'main.js'),
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Error and class names as in the sources (logs and error reports show them).
    keepNames: true,
    // Stack traces name the TypeScript lines with `node --enable-source-maps`; the sources
    // themselves are not shipped.
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [storedFunctionsPlugin],
  });

  // A source that finds a file next to itself would find it next to dist/main.js instead.
  const locating = Object.keys(result.metafile.inputs)
    .filter((input) => resolve(root, input) !== functionFilesModule)
    .filter((input) =>
      /\b(import\.meta\.(url|dirname|filename)|__dirname|__filename)\b/.test(readFileSync(join(root, input), 'utf8')),
    );
  if (locating.length) {
    throw new Error(
      `${locating.join(', ')} locate${locating.length > 1 ? '' : 's'} files by import.meta.url or __dirname, ` +
        `which in dist/main.js name the bundle, not the source: resolve them from a package ` +
        `(import.meta.resolve) or keep their content in a module.`,
    );
  }

  const { dependencies = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const imported = new Set();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const { path, external } of output.imports) if (external && packageOf(path)) imported.add(packageOf(path));
  }
  const missing = [...imported].filter((name) => !(name in dependencies)).sort();
  if (missing.length) {
    throw new Error(
      `The server imports ${missing.join(', ')}, not in the dependencies of package.json: a production ` +
        `install (npm ci --omit=dev) would not have ${missing.length > 1 ? 'them' : 'it'}.`,
    );
  }

  // Each file is written beside its place and renamed into it, the build information last: a
  // process starting meanwhile sees a whole file, and a build that stopped halfway is not current.
  mkdirSync(outdir, { recursive: true });
  const place = (path, contents) => {
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, contents);
    renameSync(temporary, path);
  };
  for (const file of result.outputFiles) place(file.path, file.contents);
  place(
    join(outdir, 'build-info.json'),
    `${JSON.stringify(
      {
        sourceHash: hash,
        builtAt: new Date().toISOString(),
        esbuild: version,
        node: process.version,
        packages: [...imported].sort(),
      },
      null,
      2,
    )}\n`,
  );
  return { outdir, packages: [...imported].sort() };
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const option = (name) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? resolve(process.argv[at + 1] ?? '') : undefined;
  };
  const outdir = option('--outdir') ?? defaultOutdir;
  const started = performance.now();
  try {
    await buildServer({ outdir, entry: option('--entry') });
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
  console.log(
    `Built ${relative(process.cwd(), join(outdir, 'main.js')) || 'main.js'} ` +
      `in ${Math.round(performance.now() - started)} ms`,
  );
}
