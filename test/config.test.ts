import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../src/platform/config/config.js';
import { defaultWebhookRetryScheduleMs } from '../src/platform/config/config-values.js';
import { spawnServiceProcess } from './support/process.js';
import { startService } from '../src/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The problems `loadConfig(env)` reports; fails when it accepts the environment. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

describe('configuration', () => {
  it('has a default for every setting', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.adminPort, 8081);
    assert.equal(config.adminToken, undefined);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, './data');
    assert.equal(config.databasePoolMax, 10);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.trustedProxies, []);
    assert.equal(config.workers, true);
    assert.equal(config.rateLimitScale, 1);
    assert.equal(config.tokenTtlSeconds, 1800);
    assert.equal(config.jobLeaseSeconds, 60);
    assert.deepEqual(config.webhookRetryScheduleMs, defaultWebhookRetryScheduleMs);
    assert.equal(config.webhookPrivateTargets, 'sandbox');
    assert.equal(config.webhookDeliveryTimeoutMs, 15_000);
    assert.deepEqual(config.simulatorChainNetworks, ['TRON', 'ETHEREUM', 'BITCOIN']);
    assert.equal(config.upstreamAdapters.qrpay, 'simulator');
    assert.equal(config.depositAddressRetryAfterSeconds, 60);
  });

  it('treats an empty value as unset', () => {
    assert.deepEqual(loadConfig({ PORT: '', TOKEN_TTL_SECONDS: ' ', DATABASE_URL: '', LOG_LEVEL: '' }), loadConfig({}));
  });

  it('reads good values', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      ADMIN_PORT: '9001',
      ADMIN_HOST: 'localhost',
      ADMIN_TOKEN: 'adm_0123456789abcdef',
      DATABASE_URL: 'postgres://user:pw@db.internal:5432/mwa',
      DATABASE_POOL_MAX: '25',
      LOG_LEVEL: 'debug',
      TRUSTED_PROXIES: '10.0.0.1, 10.1.0.0/16,loopback, ::1, fd00::/8',
      BODY_LIMIT_BYTES: '2048',
      WORKERS: 'off',
      RATE_LIMIT_SCALE: '100000',
      TOKEN_TTL_SECONDS: ' 3 ',
      JOB_POLL_INTERVAL_MS: '50',
      JOB_LEASE_SECONDS: '4',
      WEBHOOK_RETRY_SCHEDULE_MS: '50,50',
      WEBHOOK_PRIVATE_TARGETS: 'none',
      WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
      UPSTREAM_QRPAY_ADAPTER: 'simulator',
      SIMULATOR_CHAIN_NETWORKS: 'tron, solana',
      UPSTREAM_RECONCILE_DELAY_MS: '10',
      UPSTREAM_RECONCILE_MAX_DELAY_MS: '10',
      UPSTREAM_NOT_FOUND_GRACE_MS: '0',
    });
    assert.equal(config.port, 0);
    assert.equal(config.adminHost, 'localhost');
    assert.equal(config.databaseUrl, 'postgres://user:pw@db.internal:5432/mwa');
    assert.equal(config.databasePoolMax, 25);
    assert.equal(config.logLevel, 'debug');
    assert.deepEqual(config.trustedProxies, ['10.0.0.1', '10.1.0.0/16', 'loopback', '::1', 'fd00::/8']);
    assert.equal(config.workers, false);
    assert.equal(config.tokenTtlSeconds, 3);
    assert.deepEqual(config.webhookRetryScheduleMs, [50, 50]);
    assert.deepEqual(config.simulatorChainNetworks, ['TRON', 'SOLANA']);
    assert.equal(config.upstreamNotFoundGraceMs, 0);
    assert.equal(loadConfig({ DATABASE_URL: 'memory://' }).databaseUrl, 'memory://');
  });

  const refused: Array<[string, string, RegExp]> = [
    ['PORT', 'abc', /^PORT must be a whole number from 0 to 65535/],
    ['PORT', '65536', /^PORT must be/],
    ['PORT', '80.5', /^PORT must be/],
    ['ADMIN_PORT', '-1', /^ADMIN_PORT must be/],
    ['HOST', 'not a host', /^HOST must be an IP address or a host name/],
    ['ADMIN_TOKEN', 'short', /^ADMIN_TOKEN must be 16 to 512 printable characters/],
    ['DATABASE_URL', 'mysql://db/mwa', /^DATABASE_URL must be unset .*memory:\/\/ or a postgres:\/\//],
    ['DATABASE_POOL_MAX', 'NaN', /^DATABASE_POOL_MAX must be a whole number from 1 to 1000; got "NaN"/],
    ['DATABASE_POOL_MAX', '0', /^DATABASE_POOL_MAX must be/],
    ['LOG_LEVEL', 'verbose', /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "verbose"/],
    ['TRUSTED_PROXIES', '10.0.0.1,proxy.internal', /^TRUSTED_PROXIES must be comma-separated IP addresses/],
    ['TRUSTED_PROXIES', '10.0.0.0/33', /^TRUSTED_PROXIES must be/],
    ['BODY_LIMIT_BYTES', '1e6', /^BODY_LIMIT_BYTES must be a whole number/],
    ['WORKERS', 'no', /^WORKERS must be one of on, off/],
    ['RATE_LIMIT_SCALE', '0', /^RATE_LIMIT_SCALE must be a whole number from 1/],
    ['JOB_POLL_INTERVAL_MS', '0', /^JOB_POLL_INTERVAL_MS must be/],
    ['JOB_LEASE_SECONDS', '0x10', /^JOB_LEASE_SECONDS must be/],
    ['TOKEN_TTL_SECONDS', 'NaN', /^TOKEN_TTL_SECONDS must be a whole number from 1 to 1800/],
    ['TOKEN_TTL_SECONDS', '3600', /^TOKEN_TTL_SECONDS must be/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '1,,2', /^WEBHOOK_RETRY_SCHEDULE_MS must be 1 to 20/],
    ['WEBHOOK_PRIVATE_TARGETS', 'private', /^WEBHOOK_PRIVATE_TARGETS must be one of sandbox, none, all/],
    ['WEBHOOK_DELIVERY_TIMEOUT_MS', '20000', /^WEBHOOK_DELIVERY_TIMEOUT_MS must be a whole number from 1 to 15000/],
    ['WEBHOOK_DISABLE_AFTER_FAILING_MS', '0', /^WEBHOOK_DISABLE_AFTER_FAILING_MS must be/],
    ['UPSTREAM_ADAPTERS', 'qrpay=acme', /^UPSTREAM_ADAPTERS: unknown adapter acme/],
    ['UPSTREAM_CARD_ADAPTER', 'acme', /^UPSTREAM_CARD_ADAPTER: unknown adapter acme/],
    ['SIMULATOR_CONFIRM_DELAY_MS', 'soon', /^SIMULATOR_CONFIRM_DELAY_MS must be/],
    ['SIMULATOR_CHAIN_NETWORKS', ' , ', /^SIMULATOR_CHAIN_NETWORKS must be 1 to 32 comma-separated network names/],
    ['SIMULATOR_CHAIN_NETWORKS', 'TRON,BNB CHAIN', /^SIMULATOR_CHAIN_NETWORKS must be/],
    ['UPSTREAM_CALL_TIMEOUT_MS', '0', /^UPSTREAM_CALL_TIMEOUT_MS must be/],
    ['UPSTREAM_RECONCILE_DELAY_MS', '-5', /^UPSTREAM_RECONCILE_DELAY_MS must be/],
    [
      'UPSTREAM_RECONCILE_MAX_DELAY_MS',
      '1000',
      /^UPSTREAM_RECONCILE_MAX_DELAY_MS must be at least UPSTREAM_RECONCILE_DELAY_MS \(5000\)/,
    ],
    ['UPSTREAM_NOT_FOUND_GRACE_MS', '1.5', /^UPSTREAM_NOT_FOUND_GRACE_MS must be/],
    ['DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS', '0', /^DEPOSIT_ADDRESS_RETRY_AFTER_SECONDS must be/],
  ];
  for (const [name, value, expected] of refused) {
    it(`refuses ${name}=${JSON.stringify(value)}, naming the variable and what it allows`, () => {
      const problems = problemsOf({ [name]: value });
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0]!, expected);
    });
  }

  it('lists every problem at once', () => {
    const problems = problemsOf({ PORT: 'abc', DATABASE_POOL_MAX: 'NaN', TOKEN_TTL_SECONDS: 'NaN', LOG_LEVEL: 'loud' });
    assert.deepEqual(
      problems.map((p) => p.split(' ')[0]),
      ['PORT', 'DATABASE_POOL_MAX', 'LOG_LEVEL', 'TOKEN_TTL_SECONDS'],
    );
    const err = (() => {
      try {
        loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' });
      } catch (e) {
        return e as Error;
      }
    })();
    assert.match(err?.message ?? '', /^Invalid configuration:\n {2}PORT must be .*\n {2}LOG_LEVEL must be /);
  });

  it('never repeats a secret in its message', () => {
    const [dbProblem] = problemsOf({ DATABASE_URL: 'mysql://app:hunter2-secret@db/mwa' });
    assert.ok(!dbProblem!.includes('hunter2'), dbProblem);
    const [tokenProblem] = problemsOf({ ADMIN_TOKEN: 'hunter2 with a space' });
    assert.ok(!tokenProblem!.includes('hunter2'), tokenProblem);
  });

  it(
    "behind a transaction-mode pooler, refuses to start without a direct URL (the migrations' session lock and " +
      'LISTEN need one)',
    async () => {
      // Refused before the database is opened: nothing listens on port 9.
      const start = startService({
        config: {
          databaseUrl: 'postgres://postgres@127.0.0.1:9/none',
          databasePooler: 'transaction',
          databaseListenUrl: undefined,
        },
      });
      await assert.rejects(
        start,
        (err: unknown) =>
          err instanceof ConfigError &&
          /DATABASE_LISTEN_URL must be set with DATABASE_POOLER=transaction/.test(err.message),
      );
    },
  );

  it('is the only reader of process.env in src/', () => {
    const readers: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts') && readFileSync(path, 'utf8').includes('process.env'))
          readers.push(path.slice(root.length));
      }
    };
    walk(join(root, 'src'));
    assert.deepEqual(readers, ['src/platform/config/config.ts']);
  });

  it('a bad value stops the start: the process exits non-zero with the message and no stack trace', async () => {
    const child = await spawnServiceProcess({
      PORT: 'abc',
      ADMIN_PORT: '0',
      DATABASE_URL: 'memory://',
      LOG_LEVEL: 'warn',
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = await once(child, 'exit');
    clearTimeout(timer);
    assert.equal(code, 78, `exit code; stderr:\n${stderr}`);
    assert.match(
      stderr,
      /Invalid configuration:\n {2}PORT must be a whole number from 0 to 65535 \(0: any free port\); got "abc"/,
    );
    assert.match(stderr, /The service did not start/);
    assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(stdout, /Merchant Wallet API on/);
  });
});
