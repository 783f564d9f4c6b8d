import { isolatePostgresDatabase, dropPostgresDatabasesSync } from './database.js';

/**
 * Loaded by `npm test` (`--import`) into every test process. With `TEST_DATABASE_URL=postgres://...`
 * each test file runs on a database of its own, copied from a template migrated once, so files
 * can run in parallel without seeing each other's rows. `TEST_DATABASE_URL` is pointed at the copy
 * before the test file loads, so everything that reads it (test services, spawned server
 * processes, direct database tests) uses the copy.
 *
 * Copies are named `<db>_r<runner pid>_f<pid>_<random>`. A test process drops its own copy when it
 * exits; the runner's process (the one given `--test`, which runs no test itself) drops, when it
 * exits, every copy its test processes left behind (a process killed on a timeout, say).
 */

const url = process.env.TEST_DATABASE_URL ?? '';
const runnerProcess = process.execArgv.includes('--test');

if (/^postgres(ql)?:\/\//.test(url)) {
  if (runnerProcess) {
    process.on('exit', () => dropPostgresDatabasesSync(url, { runnerPid: process.pid }));
  } else {
    const own = await isolatePostgresDatabase(url, process.ppid);
    process.env.TEST_DATABASE_URL = own.url;
    process.on('exit', () => dropPostgresDatabasesSync(url, { name: own.name }));
  }
}
