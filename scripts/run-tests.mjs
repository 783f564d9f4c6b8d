// `npm test`: every test file of the server and the SDK under node:test, TypeScript through tsx,
// three files at a time. The longest files start first so that the run does not end waiting for
// one of them alone (with two cores the suite is bound by its slowest files, not by their count).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const testFilesIn = (dir) => readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${dir}/${f}`);
const longestFirst = [
  'test/service-process.test.ts', 'test/webhooks-crash.test.ts', 'test/fuzz.test.ts', 'test/money-flows.test.ts',
  'test/webhooks.test.ts', 'test/docs-page.test.ts', 'test/ledger-property.test.ts', 'test/platform-auth.test.ts',
];
const all = [...testFilesIn('test'), ...testFilesIn('packages/sdk/test')];
const files = [...longestFirst.filter((f) => all.includes(f)), ...all.filter((f) => !longestFirst.includes(f))];
const concurrency = process.env.TEST_CONCURRENCY ?? '3';

const result = spawnSync(process.execPath, [
  '--import', 'tsx', '--import', './test/support/per-file-database.ts',
  '--test', `--test-concurrency=${concurrency}`, '--test-force-exit', ...files,
], { stdio: 'inherit' });
process.exit(result.status ?? 1);
