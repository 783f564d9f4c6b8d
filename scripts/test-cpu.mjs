// Where the test suite's CPU goes: runs test files one at a time, as `npm test` runs each (the same
// build, preload and flags), and prints each file's wall time and CPU time (user + system of the
// file's whole process tree: the runner, the test process, the services and browsers it starts).
// On a shared machine the CPU seconds are the figure to compare; wall time depends on the load.
//
//   node scripts/test-cpu.mjs [--tsx] [test files...]   (default: every test file)
//
// --tsx measures the files loaded through tsx instead of the build (as before the build existed).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { bundleForTests, bundledPath, newBuildDir, root, testNodeFlags } from './test-build.mjs';

const args = process.argv.slice(2);
const viaTsx = args.includes('--tsx');
const testFilesIn = (dir) => readdirSync(`${root}/${dir}`).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${dir}/${f}`);
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length ? named : [...testFilesIn('test'), ...testFilesIn('packages/sdk/test')];

const preload = 'test/support/per-file-database.ts';
const service = 'src/main.ts';
let env = process.env;
let command = (file) => ['--import', 'tsx', '--import', `./${preload}`, '--test', '--test-force-exit', file];
if (!viaTsx) {
  const outdir = newBuildDir('cpu');
  await bundleForTests({ entryPoints: [...files, preload, service], outdir });
  env = { ...process.env, MWA_SERVICE_ENTRY: bundledPath(outdir, service) };
  command = (file) => [...testNodeFlags(), '--import', bundledPath(outdir, preload), '--test', '--test-force-exit', bundledPath(outdir, file)];
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
  const seconds = (t) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60 + Number(m[2]) : NaN; };
  const [user, sys] = (lines.at(-1) ?? '').split(' ').map(seconds);
  const status = lines.find((l) => l.startsWith('exit '))?.slice(5);
  rows.push({ file, status, wall, cpu: user + sys });
  console.log(`${file.padEnd(44)} ${status === '0' ? 'ok  ' : `FAIL(${status})`} wall ${wall.toFixed(1).padStart(6)} s  cpu ${(user + sys).toFixed(1).padStart(6)} s`);
}
const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
console.log(`${'total'.padEnd(44)} ${rows.every((r) => r.status === '0') ? 'ok  ' : 'FAIL'} wall ${sum('wall').toFixed(1).padStart(6)} s  cpu ${sum('cpu').toFixed(1).padStart(6)} s`);
