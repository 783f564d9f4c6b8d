/**
 * A pooled test process of `npm test` (scripts/run-tests.mjs starts a few and hands them test
 * files one at a time over IPC). Each file runs as it would in a process of its own, as far as it
 * can tell:
 *
 * - its top-level registrations are replayed inside one `describe` named after the file
 *   (support/node-test.ts), so its hooks run around its own tests only;
 * - with `TEST_DATABASE_URL=postgres://...` it gets a database of its own, a copy of the migrated
 *   template (support/database.ts), dropped when the file ends; `TEST_DATABASE_URL` names the copy
 *   while the file loads and runs, as support/per-file-database.ts does for a process of its own;
 * - what it reports is its own: node:test's events of the file's `describe`, rendered by the spec
 *   reporter (support/worker-reporter.ts feeds them here), an error that escaped its tests
 *   (an unhandled rejection after a test ended) fails the file, as it fails a process.
 *
 * What the file leaves running (timers, sockets, child processes, a service not closed) is counted:
 * the runner replaces a worker that a file left anything in, so nothing leaks into the next file.
 * Modules are shared: a module's top-level state (support/database.ts keeps the embedded image
 * once per process) lives on from file to file; the sources keep theirs per service, not per module.
 */
import { pathToFileURL } from 'node:url';
import { spec } from 'node:test/reporters';
import { it, nodeTestDescribe, recordRegistrations, type Registration } from './node-test.js';

interface RunMessage {
  type: 'run';
  file: string;
  bundle: string;
}

type TestEvent = { type: string; data: any };

interface Counts {
  tests: number;
  suites: number;
  pass: number;
  fail: number;
  cancelled: number;
  skipped: number;
  todo: number;
}

interface FileRun {
  file: string;
  counts: Counts;
  renderer: InstanceType<typeof spec>;
  passed: boolean | undefined;
  locations: Map<string, { file: string; line: number; column: number }>;
}

const send = (message: unknown) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, (err: Error | null) => (err ? reject(err) : resolve())),
  );

let current: FileRun | undefined;
const escaped: string[] = [];

/** node:test's events, from the reporter (support/worker-reporter.ts). */
(globalThis as any)[Symbol.for('mwa.test-worker')] = {
  event(event: TestEvent) {
    const run = current;
    if (!run || run.passed !== undefined) return;
    const d = event.data ?? {};
    // A test or suite registered at the file's top level was replayed by support/node-test.ts:
    // node:test took that module for its location; the file's own line is known from the recording.
    const location = d.nesting === 1 && typeof d.name === 'string' ? run.locations.get(d.name) : undefined;
    if (location) Object.assign(d, location);
    run.renderer.write(event);
    if ((event.type === 'test:pass' || event.type === 'test:fail') && d.nesting === 0 && d.name === run.file) {
      run.passed = event.type === 'test:pass';
      run.renderer.end();
      return;
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && d.nesting > 0) {
      if (d.details?.type === 'suite') {
        run.counts.suites += 1;
        return;
      }
      run.counts.tests += 1;
      if (d.skip !== undefined) run.counts.skipped += 1;
      else if (d.todo !== undefined) run.counts.todo += 1;
      else if (event.type === 'test:pass') run.counts.pass += 1;
      else if (d.details?.error?.failureType === 'cancelledByParent') run.counts.cancelled += 1;
      else run.counts.fail += 1;
    }
  },
};

for (const kind of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(kind, (err: unknown) => {
    escaped.push(`${kind}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  });
}

const baseDatabaseUrl = process.env.TEST_DATABASE_URL ?? '';
const onPostgres = /^postgres(ql)?:\/\//.test(baseDatabaseUrl);

/** Handles of the kinds a file can leave running (what `process.getActiveResourcesInfo()` names). */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo()) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

function leftRunning(before: Map<string, number>, after: Map<string, number>): string[] {
  const left: string[] = [];
  for (const [name, n] of after) if (n > (before.get(name) ?? 0)) left.push(`${n - (before.get(name) ?? 0)} ${name}`);
  return left;
}

async function runFile({ file, bundle }: RunMessage): Promise<void> {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const before = activeResources();

  let database: { url: string; name: string; directUrl: string } | undefined;
  let loadError: unknown;
  let registrations: Registration[] = [];
  try {
    if (onPostgres) {
      const { isolatePostgresDatabase } = await import('./database.js');
      database = await isolatePostgresDatabase(baseDatabaseUrl, process.ppid);
      process.env.TEST_DATABASE_URL = database.url;
      // Through a pooler: the copy's direct URL, for LISTEN (support/database.ts, testDatabaseOptions).
      if (process.env.TEST_DATABASE_ADMIN_URL) process.env.TEST_DATABASE_DIRECT_URL = database.directUrl;
    }
    registrations = await recordRegistrations(() => import(pathToFileURL(bundle).href));
  } catch (err) {
    loadError = err;
  }

  const renderer = new spec();
  // Sent as it comes, so that the runner has what a file reported before it hung or crashed.
  renderer.on('data', (chunk: string | Buffer) => {
    void send({ type: 'output', file, text: chunk.toString() });
  });
  const rendered = new Promise<void>((resolve) => renderer.on('end', resolve));
  const run: FileRun = {
    file,
    renderer,
    counts: { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
    passed: undefined,
    locations: new Map(
      registrations.flatMap((r) => (r.name !== undefined && r.location ? [[r.name, r.location] as const] : [])),
    ),
  };
  current = run;
  await nodeTestDescribe(file, () => {
    if (loadError !== undefined) {
      it('loads', () => {
        throw loadError;
      });
      return;
    }
    for (const registration of registrations) registration.register();
  });
  // The reporter sees the describe's end shortly after it ends (node:test reports asynchronously).
  while (run.passed === undefined) await new Promise((r) => setTimeout(r, 5));
  await rendered;
  current = undefined;

  if (database) {
    process.env.TEST_DATABASE_URL = baseDatabaseUrl;
    const { dropPostgresDatabase } = await import('./database.js');
    await dropPostgresDatabase(baseDatabaseUrl, database.name).catch((err: unknown) =>
      escaped.push(`could not drop ${database!.name}: ${String(err)}`),
    );
  }
  // Let what the file left behind show itself (a rejection, a timer about to fire) before counting;
  // what is still there after a moment more is left running (a handle that was closing is gone).
  await new Promise((r) => setImmediate(r));
  let left = leftRunning(before, activeResources());
  if (left.length > 0) {
    await new Promise((r) => setTimeout(r, 100));
    left = leftRunning(before, activeResources());
  }
  const cpu = process.cpuUsage(cpuBefore);
  const failedOutside = process.exitCode === 1 || escaped.length > 0;
  const message = {
    type: 'done',
    file,
    passed: run.passed && !failedOutside,
    counts: run.counts,
    escaped: [...escaped],
    leftRunning: left,
    rss: process.memoryUsage.rss(),
    wallMs: performance.now() - started,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  // What escaped is reported once, with the file during or after which it happened.
  escaped.length = 0;
  process.exitCode = undefined;
  await send(message);
}

// The runner gone (interrupted): stop, as a test process of the runner would with it.
process.on('disconnect', () => process.exit(1));

let queue = Promise.resolve();
process.on('message', (message: RunMessage | { type: 'exit' }) => {
  if (message.type === 'exit') process.exit(0);
  if (message.type === 'run') {
    queue = queue
      .then(() => runFile(message))
      .catch((err: unknown) => {
        process.stderr.write(`test worker: ${err instanceof Error ? err.stack : String(err)}\n`);
        process.exit(70);
      });
  }
});
void send({ type: 'ready' });
