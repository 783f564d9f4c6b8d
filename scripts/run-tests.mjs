// `npm test`: every test file of the server, the SDK and the CLI under node:test, or the files named:
//
//   node scripts/run-tests.mjs [test files...]
//
// The TypeScript is bundled once for the run (scripts/test-build.mjs) and the test processes load
// plain JavaScript: the same sources as under tsx, without a loader's cost in every process. The
// service that tests start as a process (src/main.ts) is in the same build (MWA_SERVICE_ENTRY).
// Node's flags for the test processes: testNodeFlags() in scripts/test-build.mjs.
//
// Files run in a small pool of long-lived worker processes (TEST_CONCURRENCY, 3 by default), each
// running one file at a time (test/support/worker.ts): a file no longer pays for loading the code
// and warming up in a process of its own. Each file keeps its own describe (its hooks run around
// its own tests), its own PostgreSQL database copy, and its own report; a worker that a file
// left something running in (a timer, a socket, a process), or that grew large, is replaced
// before the next file. A file whose first lines say `// npm test: own process (why)` runs in a
// fresh worker of its own. The longest files start first so that the run does not end waiting for
// one of them alone. A file that takes longer than TEST_FILE_TIMEOUT_S (300 s) is stopped, with
// its worker and everything the worker started, and fails.
//
// One file can still be run on its own straight from its source:
//   node --import tsx --import ./test/support/per-file-database.ts --test --test-force-exit test/x.test.ts
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { bundleForTests, bundledPath, newBuildDir, root, testNodeFlags } from './test-build.mjs';

const testFilesIn = (dir) =>
  readdirSync(`${root}/${dir}`)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `${dir}/${f}`);
// Wall times in pooled runs (an embedded run of 2026-12-07 on the project machine, files over 4 s,
// longest first); files not in this list (or not present) follow in name order.
const longestFirst = [
  'test/idempotency-audit.test.ts',
  'test/console-layout.test.ts',
  'test/console-browser.test.ts',
  'test/service-process.test.ts',
  'test/webhooks-crash.test.ts',
  'test/isolation-audit.test.ts',
  'test/console-areas.test.ts',
  'test/cards-reconcile.test.ts',
  'test/group-commit-crash.test.ts',
  'test/earn-qr-audit.test.ts',
  'test/fuzz.test.ts',
  'packages/cli/test/mwa-binary.test.ts',
  'test/step-up.test.ts',
  'test/events.test.ts',
  'test/ledger-as-of.test.ts',
  'test/docs-page.test.ts',
  'test/openapi-codegen.test.ts',
  'test/remittance-orders.test.ts',
  'test/webhooks.test.ts',
  'test/http-operations.test.ts',
  'test/operator-fuzz.test.ts',
  'test/ledger-plans.test.ts',
  'test/platform-auth.test.ts',
  'test/console.test.ts',
  'test/qrpay.test.ts',
  'test/exchange-orders.test.ts',
  'test/deposits-batch.test.ts',
  'test/cards.test.ts',
  'test/cards-replacement.test.ts',
  'test/cards-controls.test.ts',
  'test/exports.test.ts',
  'test/telemetry.test.ts',
  'test/cards-integration.test.ts',
  'test/security-hardening.test.ts',
  'test/sdk-server.test.ts',
  'test/write-model-property.test.ts',
  'test/console-2fa.test.ts',
  'test/events-stream.test.ts',
  'test/kyc-browser.test.ts',
];
const named = process.argv.slice(2).map((f) => relative(root, resolve(f)));
const all = named.length
  ? named
  : [...testFilesIn('test'), ...testFilesIn('packages/sdk/test'), ...testFilesIn('packages/cli/test')];
const files = [...longestFirst.filter((f) => all.includes(f)), ...all.filter((f) => !longestFirst.includes(f))];
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? '3'));
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_S ?? '300') * 1000;
/** A worker larger than this after a file is replaced (a file's services and database are freed, but not always to the
 * OS). */
const workerRssLimit = 1536 * 1024 * 1024;
const ownProcess = new Set(
  files.filter((f) => /^\/\/ npm test: own process\b/m.test(readFileSync(`${root}/${f}`, 'utf8').slice(0, 4000))),
);

const worker = 'test/support/worker.ts';
const reporter = 'test/support/worker-reporter.ts';
const service = 'src/main.ts';
const database = 'test/support/database.ts';
const outdir = newBuildDir('run');
const started = performance.now();
await bundleForTests({ entryPoints: [...files, worker, reporter, service, database], outdir });
console.log(`# test build: ${files.length} files in ${Math.round(performance.now() - started)} ms`);

const databaseUrl = process.env.TEST_DATABASE_URL ?? '';
if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
  // A database that does not exist (or a server that does not answer) would fail every file.
  const { default: pg } = await import('pg');
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
  } catch (err) {
    console.error(
      `TEST_DATABASE_URL: cannot connect (${err.message}). The database must exist: createdb -h <host> -U ` +
        `<user> <name>.`,
    );
    process.exit(1);
  } finally {
    await probe.end().catch(() => undefined);
  }
  // Workers drop their files' copies; this drops what a killed worker left (copies are named after the runner's pid).
  const { dropPostgresDatabasesSync } = await import(bundledPath(outdir, database));
  process.on('exit', () => dropPostgresDatabasesSync(databaseUrl, { runnerPid: process.pid }));
}

const workers = new Set();

/** A worker process: its own process group, so that stopping it stops what its files started. */
function startWorker() {
  const child = fork(bundledPath(outdir, worker), [], {
    cwd: root,
    execArgv: [...testNodeFlags(), '--test-reporter', bundledPath(outdir, reporter)],
    env: { ...process.env, MWA_SERVICE_ENTRY: bundledPath(outdir, service) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
  const handle = {
    child,
    exited,
    kill() {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    async stop() {
      if (child.connected) child.send({ type: 'exit' }, () => {}); // a worker already gone answers EPIPE
      const ended = await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (!ended) handle.kill();
      // What the worker's files started and left (a browser, a service process) goes with it.
      handle.kill();
      workers.delete(handle);
    },
    /** Runs one file; answers the worker's report, or a failure when the worker died or timed out. */
    run(file) {
      return new Promise((resolveRun) => {
        const timer = setTimeout(() => {
          finish({ file, passed: false, problem: `stopped after ${fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT_S)` });
          handle.kill();
        }, fileTimeoutMs);
        let output = '';
        const onMessage = (m) => {
          if (m.type === 'output' && m.file === file) output += m.text;
          if (m.type === 'done' && m.file === file) finish(m);
        };
        const onExit = () => finish({ file, passed: false, problem: 'its worker process ended before the file did' });
        function finish(result) {
          result.output = output;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolveRun(result);
        }
        child.on('message', onMessage);
        exited.then(onExit);
        child.send({ type: 'run', file, bundle: bundledPath(outdir, file) });
      });
    },
  };
  workers.add(handle);
  return handle;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const w of workers) w.kill();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

const queue = [...files];
const results = [];

function report(result) {
  if (result.output) process.stdout.write(result.output);
  if (result.problem) process.stdout.write(`✖ ${result.file}: ${result.problem}\n`);
  for (const e of result.escaped ?? [])
    process.stdout.write(`✖ ${result.file}: an error outside its tests\n  ${e.replace(/\n/g, '\n  ')}\n`);
  if (result.leftRunning?.length)
    process.stdout.write(`ℹ ${result.file} left running: ${result.leftRunning.join(', ')} (its worker is replaced)\n`);
}

async function slot() {
  let pooled;
  while (queue.length) {
    const file = queue.shift();
    const alone = ownProcess.has(file);
    const w = alone ? startWorker() : (pooled ??= startWorker());
    const result = await w.run(file);
    results.push(result);
    report(result);
    const replace =
      alone || !result.passed || result.problem || result.leftRunning?.length || result.rss > workerRssLimit;
    if (replace) {
      await w.stop();
      if (w === pooled) pooled = undefined;
    }
  }
  await pooled?.stop();
}

await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, slot));

const total = (k) => results.reduce((s, r) => s + (r.counts?.[k] ?? 0), 0);
const failed = results.filter((r) => !r.passed);
console.log(
  [
    `ℹ files ${results.length} (${ownProcess.size} in a process of their own, the rest in ${concurrency} ` +
      `pooled workers)`,
    ...['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'].map((k) => `ℹ ${k} ${total(k)}`),
    `ℹ duration_ms ${Math.round(performance.now() - started)}`,
  ].join('\n'),
);
if (process.env.TEST_TIMES === '1') {
  for (const r of [...results].sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0))) {
    console.log(
      `ℹ ${r.file.padEnd(48)} wall ${((r.wallMs ?? 0) / 1000).toFixed(1).padStart(6)} s  worker ` +
        `cpu ${((r.cpuMs ?? 0) / 1000).toFixed(1).padStart(6)} s  worker rss ` +
        `after ${Math.round((r.rss ?? 0) / 2 ** 20)} MB`,
    );
  }
}
if (failed.length)
  console.log(
    `✖ failed files ` +
      `(${failed.length}):\n${failed.map((r) => `  ${r.file}${r.problem ? ` (${r.problem})` : ''}`).join('\n')}`,
  );
process.exit(failed.length ? 1 : 0);
