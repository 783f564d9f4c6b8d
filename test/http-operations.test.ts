import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { spawnSync } from 'node:child_process';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { loadConfig, ConfigError } from '../src/platform/config/config.js';
import { redactedPath } from '../src/platform/telemetry/request-log.js';
import { rawRequest } from './support/raw-http.js';
import { createKey, createMerchant, startTestService, type Credentials, useTestService } from './support/service.js';
import { testHostedScreenKey } from './support/hosted.js';

/**
 * Issue 35 points 3 and 4 and issue 36 point 5: what an operator relies on at the HTTP edge, on
 * the real listeners: a whole request within REQUEST_TIMEOUT_MS, hosted links built from the
 * configured public base URLs whatever Host the caller sends, metric names Prometheus accepts,
 * and /readyz at 503 from the moment a drain begins.
 */

/** Opens a connection to `url`'s port, sends `head` (request line and headers) and answers the socket once it is
 * written. */
async function openRequest(url: string, head: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(head);
  return socket;
}

/** Resolves with the time the socket closed (ms after `since`) and what it received, or with `undefined` after
 * `limitMs`. */
function closedWithin(
  socket: Socket,
  since: number,
  limitMs: number,
): Promise<{ afterMs: number; received: string } | undefined> {
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => {});
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ afterMs: performance.now() - since, received });
    });
  });
}

describe('a request is bounded as a whole: headers and body within REQUEST_TIMEOUT_MS (issue 35, point 3)', () => {
  let service: RunningService;
  const requestTimeoutMs = 1_000;
  useTestService({ config: { requestTimeoutMs }, merchant: false }, (s) => ({ service } = s));

  it(
    'closes a connection that sent complete headers and then trickles its body, ' + 'answering 400 in the envelope',
    async () => {
      const started = performance.now();
      // A public call that reads its body (no token needed to wait for it).
      const socket = await openRequest(
        service.publicUrl,
        [
          'POST /v1/connect/token HTTP/1.1',
          'Host: api-sandbox.localhost',
          'Content-Type: application/json',
          'Content-Length: 1000',
          '',
          '',
        ].join('\r\n'),
      );
      // One byte every 100 ms: never idle, never done.
      const trickle = setInterval(() => socket.writable && socket.write('{'), 100);
      // The bound: the timeout, Node's check interval (a tenth of it, at most 1 s) and slack for a busy machine.
      const closed = await closedWithin(socket, started, requestTimeoutMs * 2 + 3_000);
      clearInterval(trickle);
      socket.destroy();
      assert.ok(closed, 'the connection was still open 5 s after its headers');
      assert.ok(
        closed.afterMs >= requestTimeoutMs - 50,
        `closed after ${Math.round(closed.afterMs)} ms, before the timeout`,
      );
      assert.match(closed.received, /^HTTP\/1\.1 400 /);
      assert.match(closed.received, /"code":"invalid_request"/);
      assert.match(closed.received, /not received in time/);
    },
  );

  it('leaves a request alone once its body has arrived, however long its answer takes', async () => {
    // A bounded request is one received in time: the same listener still answers normal calls.
    const res = await rawRequest(`${service.publicUrl}/healthz`);
    assert.equal(res.status, 200);
  });
});

describe('hosted_url comes from the configured public base URL, never from the Host header (issue 35, point 4)', () => {
  let service: RunningService;
  const sandboxBase = 'https://sandbox.wallet.example.test';
  const clientOn = (creds: Credentials, host: string) =>
    new MerchantWalletClient({
      baseUrl: `http://${host}:${new URL(service.publicUrl).port}`,
      connectHost: '127.0.0.1',
      clientId: creds.clientId,
      apiKey: creds.apiKey,
      signingKey: creds.signingKey,
      maxAttempts: 1,
    });
  // The sandbox's base configured; the production one left to its local default.
  useTestService(
    {
      config: { publicBaseUrls: { sandbox: `${sandboxBase}/` }, hostedScreenKey: testHostedScreenKey },
      merchant: false,
    },
    (s) => ({ service } = s),
  );

  it(
    'a KYC link asked with a forged sandbox Host points at PUBLIC_BASE_URL_SANDBOX, and its page opens only ' + 'there',
    async () => {
      const merchantId = await createMerchant(service);
      const client = clientOn(await createKey(service, merchantId), 'api-sandbox.evil.example');
      const member = await client.members.create({ external_member_id: 'forged-host' });
      const ticket = await client.kyc.createSession({ onBehalfOf: member.id });
      assert.equal(ticket.hosted_url, `${sandboxBase}/hosted/${ticket.id}`);
      const page = (host: string) => rawRequest(`${service.publicUrl}/hosted/${ticket.id}`, { headers: { host } });
      // Behind a proxy the page arrives with the public host; the forged one is another host: 404.
      assert.equal((await page('sandbox.wallet.example.test')).status, 200);
      assert.equal((await page(`api-sandbox.evil.example:${new URL(service.publicUrl).port}`)).status, 404);
    },
  );

  it('unset, the production base is the local default, whatever the Host header says', async () => {
    const merchantId = await createMerchant(service);
    const client = clientOn(await createKey(service, merchantId, { environment: 'production' }), 'api.evil.example');
    const member = await client.members.create({ external_member_id: 'forged-host-production' });
    const ticket = await client.kyc.createSession({ onBehalfOf: member.id });
    assert.equal(ticket.hosted_url, `http://api.localhost:${new URL(service.publicUrl).port}/hosted/${ticket.id}`);
  });

  it('PUBLIC_BASE_URL_* must be an origin of its own environment', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    assert.deepEqual(
      loadConfig({
        PUBLIC_BASE_URL_SANDBOX: 'https://API-Sandbox.Example.com:443',
        PUBLIC_BASE_URL_PRODUCTION: 'https://api.example.com',
      }).publicBaseUrls,
      { sandbox: 'https://api-sandbox.example.com', production: 'https://api.example.com' },
    );
    for (const bad of [
      'https://api.example.com',
      'ftp://sandbox.example.com',
      'https://sandbox.example.com/wallet',
      'https://u:p@sandbox.example.com',
      'https://sandbox.example.com?x=1',
      'sandbox.example.com',
    ]) {
      assert.match(problems({ PUBLIC_BASE_URL_SANDBOX: bad }).join('\n'), /^PUBLIC_BASE_URL_SANDBOX must be/, bad);
    }
    assert.match(
      problems({ PUBLIC_BASE_URL_PRODUCTION: 'https://sandbox.example.com' }).join('\n'),
      /^PUBLIC_BASE_URL_PRODUCTION must be/,
    );
    assert.match(
      problems({ REQUEST_TIMEOUT_MS: '10' }).join('\n'),
      /^REQUEST_TIMEOUT_MS must be a whole number from 1000/,
    );
    assert.match(
      problems({ SHUTDOWN_TIMEOUT_MS: '-1' }).join('\n'),
      /^SHUTDOWN_TIMEOUT_MS must be a whole number from 1/,
    );
  });
});

/** The metric families of a Prometheus text exposition: name, type, whether it has HELP. */
function families(text: string): { name: string; type: string; help: boolean }[] {
  const help = new Set([...text.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]!));
  return [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]!, help: help.has(m[1]!) }));
}

/** promtool on PATH (`apt-get install prometheus` has it), or PROMTOOL naming it. */
function promtool(): string | undefined {
  const bin = process.env.PROMTOOL || 'promtool';
  return spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0 ? bin : undefined;
}

describe('/metrics names Prometheus accepts (issue 36, point 5)', () => {
  let service: RunningService;
  let text: string;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    // A request of each kind the counters see, so the export has every family with values.
    await rawRequest(`${service.publicUrl}/healthz`);
    text = (await rawRequest(`${service.adminUrl}/metrics`)).text;
  });

  it('counters end in _total, nothing else does, every family has HELP and a snake_case name', () => {
    const all = families(text);
    assert.ok(
      all.some((f) => f.name === 'group_commit_batches_total'),
      'the group commit counts are exported',
    );
    for (const f of all) {
      assert.match(f.name, /^[a-z_:][a-z0-9_:]*$/, f.name);
      assert.ok(f.help, `${f.name} has HELP`);
      if (f.type === 'counter') assert.match(f.name, /_total$/, `counter ${f.name} ends in _total`);
      else assert.doesNotMatch(f.name, /_total$/, `${f.type} ${f.name} does not end in _total`);
    }
    for (const name of [
      'group_commit_batches_total',
      'group_commit_writes_total',
      'group_commit_fallbacks_total',
      'group_commit_together_total',
      'nonce_batch_statements_total',
      'nonce_batch_nonces_total',
      'read_batches_total',
      'read_batch_reads_total',
    ]) {
      assert.equal(all.find((f) => f.name === name)?.type, 'counter', name);
    }
  });

  it('promtool check metrics finds nothing (when promtool is installed)', (t) => {
    const bin = promtool();
    if (!bin) return t.skip('promtool is not installed (apt-get install prometheus)');
    // promtool reads the exposition on stdin; any finding is printed and makes the exit status 1 (or 3 for lint only).
    const run = spawnSync(bin, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(run.status, 0, `promtool check metrics:\n${run.stdout}${run.stderr}`);
  });
});

describe(
  '/readyz during a drain (issue 36, point 5) and a drain bounded by SHUTDOWN_TIMEOUT_MS (issue 35, ' + 'point 6)',
  () => {
    it(
      'answers 503 from the moment the drain begins, on the operator listener kept open meanwhile; a connection ' +
        'still receiving is cut at the bound',
      async () => {
        const shutdownTimeoutMs = 1_500;
        const service = await startTestService({ config: { shutdownTimeoutMs } });
        try {
          assert.equal((await rawRequest(`${service.adminUrl}/readyz`)).status, 200);
          // A body that never finishes holds the drain.
          const socket = await openRequest(
            service.publicUrl,
            [
              'POST /v1/members HTTP/1.1',
              'Host: api-sandbox.localhost',
              'Content-Type: application/json',
              'Content-Length: 100',
              '',
              '{',
            ].join('\r\n'),
          );
          const started = performance.now();
          const cut = closedWithin(socket, started, shutdownTimeoutMs + 5_000);
          await new Promise((r) => setTimeout(r, 100));
          const closing = service.close();
          const ready = await rawRequest(`${service.adminUrl}/readyz`);
          assert.equal(ready.status, 503);
          assert.deepEqual(ready.body, { ok: false, draining: true });
          await closing;
          const stoppedAfter = performance.now() - started;
          assert.ok(stoppedAfter < shutdownTimeoutMs + 3_000, `close() took ${Math.round(stoppedAfter)} ms`);
          assert.ok(await cut, 'the held connection was closed');
        } finally {
          await service.close();
        }
      },
    );
  },
);

describe('unmatched paths in the log', () => {
  it('keep their words and lose ids, tickets, tokens and the query', () => {
    assert.equal(
      redactedPath(`/v1//sandbox/hosted-screens/kyc_${'ab12'.repeat(8)}/complete`),
      '/v1//sandbox/hosted-screens/:redacted/complete',
    );
    assert.equal(redactedPath('/v1/members/mem_0f3c/x?cursor=secret'), '/v1/members/:redacted/x');
    assert.equal(
      redactedPath('/console/invite/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg'),
      '/console/invite/:redacted',
    );
    assert.equal(
      redactedPath('/v1/openapi.json/%2e%2e/3fa85f64-5717-4562-b3fc-2c963f66afa6'),
      '/v1/openapi.json/:redacted/:redacted',
    );
    assert.equal(redactedPath('/hosted/assets/screen.css'), '/hosted/assets/screen.css');
  });
});
