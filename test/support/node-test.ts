/**
 * `node:test` as the test files see it under `npm test`: the build (scripts/test-build.mjs) points
 * their `import ... from 'node:test'` here. Outside a pooled worker it is `node:test` itself:
 * every call goes straight through.
 *
 * Why: `npm test` runs several test files one after another in one long-lived process
 * (scripts/test-worker.mjs), which saves each file the ~1 s of loading the code and much of
 * starting its first service. In one process, node:test has one root: a file's top-level
 * `after()` would run only after every file of the process, its `before()` not at all where it
 * should. So while a worker imports a file, the file's top-level registrations (`test`, `describe`,
 * hooks, ...) are recorded instead of made (`recordRegistrations`), and the worker replays them,
 * in order, inside one `describe` named after the file: the file's hooks then run around the
 * file's tests, as they did at the root of a process of its own. Registrations made later (inside
 * a describe's body, or `t.test` in a test) happen inside node:test's own context and pass
 * straight through.
 */
import * as nodeTest from 'node:test';

// Everything else (mock, run, snapshot, ...) is node:test's own. TypeScript refuses `export *` of
// a module declared with `export =`; at run time (esbuild's ESM) it is a plain re-export.
// @ts-ignore
export * from 'node:test';

export interface Registration {
  /** Makes the recorded call, in node:test's context of the moment. */
  register: () => unknown;
  /** The test's or suite's name, when given as a string (hooks have none). */
  name: string | undefined;
  /** Where the test file made the call (node:test would report it; replayed, it sees this module). */
  location: { file: string; line: number; column: number } | undefined;
}
let recording: Registration[] | undefined;

/** The caller of a recorder, from a stack trace (source-mapped: the test file's own lines). */
function callerLocation(): Registration['location'] {
  const frame = new Error().stack?.split('\n')[3] ?? '';
  const m = /\(?(?:file:\/\/)?([^()]+?):(\d+):(\d+)\)?$/.exec(frame.trim());
  return m ? { file: m[1]!, line: Number(m[2]), column: Number(m[3]) } : undefined;
}

/**
 * While recording, `real` is replaced by a function that records its call. Otherwise the test
 * files call node:test's own function: the exports below are live bindings, swapped only while a
 * worker loads a file, so that node:test sees the test file as the caller (it reports each test's
 * location as the line that called `test()`).
 */
function recorder<F extends (...args: any[]) => any>(real: F): F {
  const record = function (this: unknown, ...args: unknown[]) {
    recording!.push({
      register: () => real.apply(this, args),
      name: typeof args[0] === 'string' ? args[0] : undefined,
      location: callerLocation(),
    });
    return Promise.resolve();
  } as unknown as F;
  // test.skip, test.todo, test.only, describe.skip, ... (whatever this Node's node:test has)
  for (const key of Object.keys(real)) {
    const value = (real as any)[key];
    (record as any)[key] = typeof value === 'function' ? recorder(value.bind(real)) : value;
  }
  return record;
}

const real = {
  test: nodeTest.test,
  it: nodeTest.it,
  describe: nodeTest.describe,
  suite: nodeTest.suite,
  before: nodeTest.before,
  after: nodeTest.after,
  beforeEach: nodeTest.beforeEach,
  afterEach: nodeTest.afterEach,
};
const recorders = Object.fromEntries(
  Object.entries(real).map(([name, fn]) => [name, recorder(fn as (...args: any[]) => any)]),
) as typeof real;

export let test = real.test;
export let it = real.it;
export let describe = real.describe;
export let suite = real.suite;
export let before = real.before;
export let after = real.after;
export let beforeEach = real.beforeEach;
export let afterEach = real.afterEach;
export { test as default };

function use(fns: typeof real): void {
  ({ test, it, describe, suite, before, after, beforeEach, afterEach } = fns);
}

/**
 * Runs `load` (the import of one test file) with its top-level registrations recorded, and
 * answers them, to be replayed inside node:test's context of the caller's choice. Used by the
 * pooled worker only.
 */
export async function recordRegistrations(load: () => Promise<unknown>): Promise<Registration[]> {
  if (recording) throw new Error('recordRegistrations: already recording (one file at a time)');
  const registrations: Registration[] = [];
  recording = registrations;
  use(recorders);
  try {
    await load();
  } finally {
    recording = undefined;
    use(real);
  }
  return registrations;
}

/** node:test's own `describe`, for the worker's per-file wrapper. */
export const nodeTestDescribe = nodeTest.describe;
