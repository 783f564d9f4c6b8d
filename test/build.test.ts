import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run build` (scripts/build.mjs): the production bundle of the server, dist/main.js
 * (docs/deployment.md). Run as processes, as npm runs them; the bundles go to a folder inside
 * node_modules so that their package imports resolve as a production install's do.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code, output };
}

describe('the production build', () => {
  let dir: string;
  before(() => {
    mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
    dir = mkdtempSync(join(root, 'node_modules/.cache/mwa-build-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'bundles src/main.ts into one module that imports only the dependencies, and records the sources it was ' +
      'built from',
    async () => {
      const outdir = join(dir, 'dist');
      const built = await run(['scripts/build.mjs', '--outdir', outdir]);
      assert.equal(built.code, 0, built.output);
      assert.ok(existsSync(join(outdir, 'main.js')) && existsSync(join(outdir, 'main.js.map')));
      const info = JSON.parse(readFileSync(join(outdir, 'build-info.json'), 'utf8'));
      for (const name of info.packages)
        assert.ok(name in dependencies, `${name} is imported by the bundle but not a dependency`);
      for (const name of ['fastify', 'kysely', 'pg', '@electric-sql/pglite'])
        assert.ok(info.packages.includes(name), name);

      const current = (d: string) =>
        run([
          '--input-type=module',
          '-e',
          `import { buildIsCurrent } from './scripts/build.mjs'; console.log(buildIsCurrent(${JSON.stringify(d)}))`,
        ]);
      assert.equal((await current(outdir)).output.trim(), 'true');
      // Built from other sources: npm start rebuilds.
      writeFileSync(join(outdir, 'build-info.json'), JSON.stringify({ ...info, sourceHash: '0'.repeat(64) }));
      assert.equal((await current(outdir)).output.trim(), 'false');
      writeFileSync(join(outdir, 'build-info.json'), JSON.stringify(info));

      // The bundle loads (every import resolves) and refuses a bad setting as the sources do.
      const started = await run([join(outdir, 'main.js')], { PORT: 'not-a-port', DATA_DIR: join(dir, 'data') });
      assert.equal(started.code, 78, started.output);
      assert.match(started.output, /PORT must be a whole number/);
    },
  );

  it('fails when the server would import a package that a production install does not have', async () => {
    const entry = join(dir, 'imports-a-dev-dependency.ts');
    writeFileSync(
      entry,
      "import { build } from 'esbuild';\nimport Fastify from 'fastify';\nconsole.log(build, Fastify);\n",
    );
    const built = await run(['scripts/build.mjs', '--outdir', join(dir, 'bad'), '--entry', entry]);
    assert.equal(built.code, 1, built.output);
    assert.match(built.output, /imports esbuild, not in the dependencies of package\.json/);
    assert.ok(!existsSync(join(dir, 'bad/main.js')));
  });

  it(
    'fails when a source locates a file next to itself, ' + 'which the bundle would look for next to dist/main.js',
    async () => {
      const entry = join(dir, 'reads-a-file-beside-it.ts');
      // Spelt in two parts: the tests' own build rewrites that expression wherever it appears in a test file.
      const here = ['import', 'meta', 'url'].join('.');
      writeFileSync(
        entry,
        `import { readFileSync } from 'node:fs';\n` +
          `console.log(readFileSync(new URL('./page.html', ${here}), 'utf8'));\n`,
      );
      const built = await run(['scripts/build.mjs', '--outdir', join(dir, 'beside'), '--entry', entry]);
      assert.equal(built.code, 1, built.output);
      assert.match(built.output, /reads-a-file-beside-it\.ts locates files by import\.meta\.url or __dirname/);
      assert.ok(!existsSync(join(dir, 'beside/main.js')));
    },
  );
});
