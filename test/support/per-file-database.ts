/**
 * Loaded (`--import`) into a test process that runs one file under `node --test`: a file run on its
 * own from its source (docs/testing.md), and each file of `node scripts/test-cpu.mjs` without `--pool`.
 * `npm test` runs files in pooled workers, which do the same per file (support/worker.ts).
 * With `TEST_DATABASE_URL=postgres://...`
 * each test file runs on a database of its own, copied from a template migrated once, so files
 * can run in parallel without seeing each other's rows. `TEST_DATABASE_URL` is pointed at the copy
 * before the test file loads, so everything that reads it (test services, spawned server
 * processes, direct database tests) uses the copy.
 *
 * Copies are named `<db>_r<runner pid>_f<pid>_<random>`. A test process drops its own copy when it
 * exits (also on SIGTERM or SIGINT); copies of runs whose runner is gone (a test process killed
 * outright) are dropped by the next run's first copy. The runner's process (given `--test`) runs
 * no test and keeps the original URL; where it loads this module too, it drops, when it exits,
 * every copy its test processes left.
 *
 * On the embedded database (the default) it does nothing, and loads nothing: database.ts and what
 * it imports are loaded only for PostgreSQL, so that a test file that needs no database does not
 * pay for them.
 */

const url = process.env.TEST_DATABASE_URL ?? '';
const runnerProcess = process.execArgv.includes('--test');

if (/^postgres(ql)?:\/\//.test(url)) {
  const { isolatePostgresDatabase, dropPostgresDatabasesSync } = await import('./database.js');
  if (runnerProcess) {
    process.on('exit', () => dropPostgresDatabasesSync(url, { runnerPid: process.pid }));
  } else {
    const own = await isolatePostgresDatabase(url, process.ppid);
    process.env.TEST_DATABASE_URL = own.url;
    if (process.env.TEST_DATABASE_ADMIN_URL) process.env.TEST_DATABASE_DIRECT_URL = own.directUrl;
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      dropPostgresDatabasesSync(url, { name: own.name });
    };
    process.on('exit', drop);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        drop();
        process.kill(process.pid, signal);
      });
    }
  }
}
