import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  main,
  matches,
  parseTypes,
  resolveCredentials,
  splitCommand,
  triggerableTypes,
  type Io,
} from '../src/index.js';

/** Runs `mwa` in this process with its own environment and captured output. */
async function mwa(argv: string[], env: Record<string, string | undefined> = {}) {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: { HOME: mkdtempSync(join(tmpdir(), 'mwa-home-')), ...env },
    stdin: process.stdin,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

test('splitCommand: the command words, with global options before, between or after them', () => {
  assert.deepEqual(splitCommand(['--json', 'events', 'list', '--limit', '5']), {
    words: ['events', 'list'],
    rest: ['--json', '--limit', '5'],
  });
  assert.deepEqual(splitCommand(['clock']), { words: ['clock'], rest: [] });
  assert.deepEqual(splitCommand(['clock', 'advance', '1h']), { words: ['clock', 'advance'], rest: ['1h'] });
  assert.deepEqual(splitCommand(['--profile', 'ci', 'request', 'GET', '/v1/assets']), {
    words: ['request'],
    rest: ['--profile', 'ci', 'GET', '/v1/assets'],
  });
  assert.deepEqual(splitCommand(['events', '--json', 'get', 'evt_1']), {
    words: ['events', 'get'],
    rest: ['--json', 'evt_1'],
  });
  // `clock` followed by something that is not a subcommand: its positional (refused by clock itself).
  assert.deepEqual(splitCommand(['clock', '1h']), { words: ['clock'], rest: ['1h'] });
});

test('help: mwa --help and mwa <command> --help answer 0 on stdout; no arguments is a usage error', async () => {
  const top = await mwa(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /Usage: mwa <command>/);
  for (const c of ['listen', 'trigger', 'clock advance', 'events list', 'events replay', 'request', 'login'])
    assert.ok(top.stdout.includes(`  ${c} `), c);
  assert.match(top.stdout, /Exit status: 0 done, 1 an API error, 2 a usage error/);
  const listen = await mwa(['listen', '--help']);
  assert.equal(listen.code, 0);
  assert.match(listen.stdout, /Usage: mwa listen --forward-to <url>/);
  assert.match(listen.stdout, /--print-secret/);
  const trigger = await mwa(['help', 'trigger']);
  assert.equal(trigger.code, 0);
  for (const t of triggerableTypes) assert.ok(trigger.stdout.includes(t), t);
  assert.equal((await mwa(['clock', 'advance', '-h'])).code, 0);
  assert.match((await mwa(['events', '--help'])).stdout, /mwa events list/);
  const none = await mwa([]);
  assert.equal(none.code, 2);
  assert.match(none.stdout, /Usage: mwa/);
  assert.deepEqual(await mwa(['--version']), { code: 0, stdout: 'mwa 0.1.0\n', stderr: '' });
});

test("usage errors exit 2 before any call, naming the problem and the command's help", async () => {
  const creds = { MWA_CLIENT_ID: 'cli_x', MWA_API_KEY: 'k', MWA_SIGNING_KEY: 's', MWA_BASE_URL: 'http://127.0.0.1:9' };
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['events'], /needs a command: list, get, replay/],
    [['clock', 'advance'], /missing <duration>/],
    [['clock', 'advance', '1x'], /invalid duration "1x"/],
    [['clock', 'advance', '366d'], /at most 365d/],
    [['clock', 'now'], /unexpected argument "now"/],
    [['listen', '--forward-to'], /argument missing/],
    [['listen', '--bogus'], /Unknown option '--bogus'/],
    [['listen'], /--forward-to <url> is required/],
    [['listen', '--forward-to', 'ftp://x'], /http or https/],
    [['listen', '--forward-to', 'http://localhost:1', '--events', 'Deposit!'], /not an event type/],
    [['trigger', 'deposit.exploded'], /cannot trigger "deposit.exploded"; one of: deposit.credited/],
    [['trigger', 'deposit.credited', '--timeout', 'soon'], /--timeout/],
    [['events', 'list', '--limit', '0'], /--limit/],
    [['events', 'list', '--delivery-success', 'maybe'], /true or false/],
    [['events', 'list', '--since', 'yesterday'], /neither an ISO 8601 time nor a duration/],
    [['events', 'replay', 'whe_1'], /--since is required/],
    [['request', 'FETCH', '/v1/assets'], /unknown method "FETCH"/],
    [['request', 'GET', 'v1/assets'], /starts with \//],
    [['request', 'GET', '/v1/assets', '--data', '{}'], /a GET has no body/],
    [['request', 'POST', '/v1/members', '--data', '{oops'], /--data is not JSON/],
    [['request', 'POST', '/v1/members', '--data', '@/nonexistent/body.json'], /--data @\/nonexistent/],
  ];
  for (const [argv, message] of cases) {
    const r = await mwa(argv, creds);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, argv.join(' '));
    assert.match(r.stderr, /Run "mwa .*--help" for usage/, argv.join(' '));
    assert.equal(r.stdout, '', argv.join(' '));
  }
  // --json: the error as JSON on stderr.
  const j = await mwa(['clock', 'advance', '1x', '--json'], creds);
  assert.equal(j.code, 2);
  assert.deepEqual(JSON.parse(j.stderr), {
    error: { kind: 'usage', message: 'invalid duration "1x": use whole numbers with d, h, m, s (e.g. 90s, 3d, 1h30m)' },
  });
});

test(
  'credentials: none is a usage error naming the variables; ' + 'the environment wins over the profile field by field',
  async () => {
    const r = await mwa(['clock']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /no credentials: set MWA_CLIENT_ID, MWA_API_KEY, MWA_SIGNING_KEY \(and MWA_BASE_URL\), or run "mwa login"/,
    );
    const profile = {
      base_url: 'http://api-sandbox.localhost:1',
      client_id: 'cli_p',
      api_key: 'k_p',
      signing_key: 's_p',
    };
    assert.deepEqual(resolveCredentials({ MWA_API_KEY: 'k_env' }, profile, 'default'), {
      baseUrl: 'http://api-sandbox.localhost:1',
      clientId: 'cli_p',
      apiKey: 'k_env',
      signingKey: 's_p',
    });
    assert.deepEqual(
      resolveCredentials({ MWA_CLIENT_ID: 'a', MWA_API_KEY: 'b', MWA_SIGNING_KEY: 'c' }, undefined, 'default').baseUrl,
      'http://api-sandbox.localhost:8080',
    );
    assert.throws(() => resolveCredentials({ MWA_BASE_URL: 'ftp://x' }, profile, 'default'), /invalid base URL/);
  },
);

test(
  'login writes the profile with mode 0600 and never prints a secret; ' + 'listen keeps one signing secret per profile',
  async () => {
    const home = mkdtempSync(join(tmpdir(), 'mwa-config-'));
    const env = { XDG_CONFIG_HOME: home, MWA_API_KEY: 'mwk_secret_api_key', MWA_SIGNING_KEY: 'mws_secret_signing_key' };
    const r = await mwa(
      [
        'login',
        '--no-verify',
        '--base-url',
        'http://api-sandbox.localhost:8080',
        '--client-id',
        'cli_1',
        '--profile',
        'dev',
      ],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Saved profile "dev"/);
    assert.ok(!r.stdout.includes('secret') && !r.stderr.includes('secret'), 'no secret printed');
    const path = join(home, 'mwa', 'config.json');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(home, 'mwa')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).profiles.dev, {
      base_url: 'http://api-sandbox.localhost:8080',
      client_id: 'cli_1',
      api_key: 'mwk_secret_api_key',
      signing_key: 'mws_secret_signing_key',
    });
    const first = await mwa(['listen', '--print-secret', '--profile', 'dev'], { XDG_CONFIG_HOME: home });
    assert.equal(first.code, 0);
    assert.match(first.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/);
    assert.equal(
      (await mwa(['listen', '--print-secret', '--json'], { XDG_CONFIG_HOME: home, MWA_PROFILE: 'dev' })).stdout,
      `${JSON.stringify({ secret: first.stdout.trim() })}\n`,
    );
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const other = await mwa(['listen', '--print-secret', '--profile', 'other'], { XDG_CONFIG_HOME: home });
    assert.notEqual(other.stdout, first.stdout);
    // Without a terminal, a missing value is a usage error, not a prompt.
    const missing = await mwa(['login', '--no-verify', '--client-id', 'cli_1'], { XDG_CONFIG_HOME: home });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /API key missing: give --api-key or set MWA_API_KEY/);
  },
);

test('--events: exact types and prefixes', () => {
  assert.deepEqual(parseTypes('deposit.credited, card.*'), ['deposit.credited', 'card.*']);
  assert.deepEqual(parseTypes('*'), []);
  assert.ok(matches([], 'anything.at_all'));
  assert.ok(matches(['card.*'], 'card.topup.credited'));
  assert.ok(!matches(['card.*'], 'cardx.topup'));
  assert.ok(matches(['deposit.credited', 'withdrawal.*'], 'withdrawal.failed'));
  assert.ok(!matches(['deposit.credited'], 'deposit.credited.extra'));
});
