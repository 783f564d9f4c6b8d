// Run by scripts/check-package.sh in a scratch project where the packed SDK and CLI tarballs are
// installed: the `mwa` bin as npm linked it, and the package's entry as an ES module, against a
// running server (MW_* variables of the script, passed on as the MWA_* the CLI reads).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, parseDuration } from '@merchant-wallet/cli';

const resolved = import.meta.resolve('@merchant-wallet/cli');
assert.match(resolved, /\/node_modules\/@merchant-wallet\/cli\/dist\/esm\/index\.js$/, `resolved to ${resolved}`);
assert.equal(parseDuration('1h30m'), 5400);
assert.equal(typeof main, 'function');

const env = {
  PATH: process.env.PATH,
  HOME: mkdtempSync(join(tmpdir(), 'mwa-pack-')),
  MWA_BASE_URL: process.env.MW_BASE_URL, // http://api-sandbox.localhost:<port>: the CLI connects to 127.0.0.1 itself
  MWA_CLIENT_ID: process.env.MW_CLIENT_ID,
  MWA_API_KEY: process.env.MW_API_KEY,
  MWA_SIGNING_KEY: process.env.MW_SIGNING_KEY,
};
const mwa = (...args) => spawnSync(join('node_modules', '.bin', 'mwa'), args, { env, encoding: 'utf8' });

const help = mwa('--help');
assert.equal(help.status, 0, help.stderr);
assert.match(help.stdout, /Usage: mwa <command>/);
assert.equal(mwa('frobnicate').status, 2);

const clock = mwa('clock', '--json');
assert.equal(clock.status, 0, clock.stderr);
assert.ok(Date.parse(JSON.parse(clock.stdout).now) > 0);

const triggered = mwa('trigger', 'deposit.credited', '--json');
assert.equal(triggered.status, 0, triggered.stderr);
const result = JSON.parse(triggered.stdout);
assert.equal(result.object, 'deposit');

const got = mwa('request', 'GET', `/v1/deposits/${result.id}`, '--json');
assert.equal(got.status, 0, got.stderr);
assert.equal(JSON.parse(got.stdout).status, 'credited');
const missing = mwa('request', 'GET', '/v1/deposits/dep_00000000-0000-4000-8000-000000000000');
assert.equal(missing.status, 1);
console.log(`cli esm: ok (mwa --help, clock, trigger deposit.credited ${result.id}, request, exit statuses)`);
