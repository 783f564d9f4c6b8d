// `npm test`: every test file of the server and the SDK under node:test, three files at a time,
// each in its own process. The longest files start first so that the run does not end waiting for
// one of them alone (with two cores the suite is bound by its slowest files, not by their count).
//
// The TypeScript is bundled once for the run (scripts/test-build.mjs) and the test processes load
// plain JavaScript: the same sources as under tsx, without a loader's cost in every process. The
// service that tests start as a process (src/main.ts) is in the same build (MWA_SERVICE_ENTRY).
// Node's flags for the test processes: testNodeFlags() in scripts/test-build.mjs.
// One file can still be run on its own straight from its source:
//   node --import tsx --import ./test/support/per-file-database.ts --test --test-force-exit test/x.test.ts
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { bundleForTests, bundledPath, newBuildDir, root, testNodeFlags } from './test-build.mjs';

const testFilesIn = (dir) => readdirSync(`${root}/${dir}`).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${dir}/${f}`);
// Measured with scripts/test-cpu.mjs (docs/performance.md, "Test suite").
const longestFirst = [
  'test/webhooks-crash.test.ts', 'test/webhooks.test.ts', 'test/service-process.test.ts', 'test/qrpay.test.ts',
  'test/money-flows.test.ts', 'test/sdk-server.test.ts', 'test/docs-page.test.ts', 'test/security-hardening.test.ts', 'test/fuzz.test.ts',
];
const all = [...testFilesIn('test'), ...testFilesIn('packages/sdk/test')];
const files = [...longestFirst.filter((f) => all.includes(f)), ...all.filter((f) => !longestFirst.includes(f))];
const concurrency = process.env.TEST_CONCURRENCY ?? '3';

const preload = 'test/support/per-file-database.ts';
const service = 'src/main.ts';
const outdir = newBuildDir('run');
const started = performance.now();
await bundleForTests({ entryPoints: [...files, preload, service], outdir });
console.log(`# test build: ${files.length} files in ${Math.round(performance.now() - started)} ms`);

const result = spawnSync(process.execPath, [
  ...testNodeFlags(), '--import', bundledPath(outdir, preload),
  '--test', `--test-concurrency=${concurrency}`, '--test-force-exit', ...files.map((f) => bundledPath(outdir, f)),
], { cwd: root, stdio: 'inherit', env: { ...process.env, MWA_SERVICE_ENTRY: bundledPath(outdir, service) } });
process.exit(result.status ?? 1);
