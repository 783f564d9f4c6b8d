// Where the test suite's CPU goes: runs test files one at a time, as `npm test` runs each (the same
// build, preload and flags), and prints each file's wall time and CPU time (user + system of the
// file's whole process tree: the runner, the test process, the services and browsers it starts).
// On a shared machine the CPU seconds are the figure to compare; wall time depends on the load.
//
//   node scripts/test-cpu.mjs [--tsx | --pool] [test files...]   (default: every test file)
//
// --tsx measures the files loaded through tsx instead of the build (as before the build existed),
// each in a process of its own (node --test, as `npm test` ran them before the pooled workers).
// --pool measures one run of `npm test` (scripts/run-tests.mjs) over the files, as a whole: the
// pooled workers share the cost of loading and warming up between files, so a file's share of it
// depends on what ran before it in its worker (TEST_TIMES=1 prints each file's worker CPU).
// Without either, each file runs alone in a process of its own, from the build.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { bundleForTests, bundledPath, newBuildDir, root, testNodeFlags } from './test-build.mjs';

const args = process.argv.slice(2);
const viaTsx = args.includes('--tsx');
const pooled = args.includes('--pool');
const testFilesIn = (dir) =>
  readdirSync(`${root}/${dir}`)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `${dir}/${f}`);
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length ? named : [...testFilesIn('test'), ...testFilesIn('packages/sdk/test')];

const preload = 'test/support/per-file-database.ts';
const service = 'src/main.ts';
let env = process.env;
let command = (file) => ['--import', 'tsx', '--import', `./${preload}`, '--test', '--test-force-exit', file];
if (pooled) {
  const quoted = [process.execPath, `${root}/scripts/run-tests.mjs`, ...named].map(
    (s) => `'${s.replace(/'/g, "'\\''")}'`,
  );
  const script = `${quoted.join(' ')} >&2; echo "exit $?"; times`;
  const started = performance.now();
  const res = spawnSync('bash', ['-c', script], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', process.env.TEST_CPU_OUTPUT === '1' ? 'inherit' : 'ignore'],
  });
  const lines = res.stdout.trim().split('\n');
  const seconds = (t) => {
    const m = /(\d+)m([\d.]+)s/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const [user, sys] = (lines.at(-1) ?? '').split(' ').map(seconds);
  const status = lines.find((l) => l.startsWith('exit '))?.slice(5);
  console.log(
    `npm test over ${files.length} files (pooled) ${status === '0' ? 'ok  ' : `FAIL(${status})`} ` +
      `wall ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ` +
      `cpu ${(user + sys).toFixed(1).padStart(6)} s`,
  );
  process.exit(status === '0' ? 0 : 1);
}
if (!viaTsx) {
  const outdir = newBuildDir('cpu');
  await bundleForTests({ entryPoints: [...files, preload, service], outdir });
  env = { ...process.env, MWA_SERVICE_ENTRY: bundledPath(outdir, service) };
  command = (file) => [
    ...testNodeFlags(),
    '--import',
    bundledPath(outdir, preload),
    '--test',
    '--test-force-exit',
    bundledPath(outdir, file),
  ];
}

const quote = (s) => `'${s.replace(/'/g, "'\\''")}'`;
const rows = [];
for (const file of files) {
  // bash's `times` prints the CPU time of the shell's finished children (the whole tree, as each
  // process waits for its own): the second line, "<user>m<s>s <sys>m<s>s".
  const script = `${[process.execPath, ...command(file)].map(quote).join(' ')} >/dev/null 2>&1; echo "exit $?"; times`;
  const started = performance.now();
  const res = spawnSync('bash', ['-c', script], { cwd: root, env, encoding: 'utf8' });
  const wall = (performance.now() - started) / 1000;
  const lines = res.stdout.trim().split('\n');
  const seconds = (t) => {
    const m = /(\d+)m([\d.]+)s/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const [user, sys] = (lines.at(-1) ?? '').split(' ').map(seconds);
  const status = lines.find((l) => l.startsWith('exit '))?.slice(5);
  rows.push({ file, status, wall, cpu: user + sys });
  console.log(
    `${file.padEnd(44)} ${status === '0' ? 'ok  ' : `FAIL(${status})`} wall ${wall.toFixed(1).padStart(6)} s ` +
      ` cpu ${(user + sys).toFixed(1).padStart(6)} s`,
  );
}
const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
console.log(
  `${'total'.padEnd(44)} ${rows.every((r) => r.status === '0') ? 'ok  ' : 'FAIL'} ` +
    `wall ${sum('wall').toFixed(1).padStart(6)} s  cpu ${sum('cpu').toFixed(1).padStart(6)} s`,
);
