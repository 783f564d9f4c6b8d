import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MerchantWalletClient } from '@merchant-wallet/sdk';
import { rawRequest } from './support/raw-http.js';
import { spawnService, type ServiceProcess } from './support/process.js';

/**
 * The real entry point as a process, on an embedded database in DATA_DIR. A start on an empty
 * database costs ~9 s of CPU (initdb and the migrations), so one first start serves the tests in
 * order: the first start's effects, the logs, SIGTERM with requests in flight; then a second start
 * on the same DATA_DIR.
 */
describe('the service as a process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mwa-start-'));
  let first: ServiceProcess;
  let creds: { client_id: string; api_key: string; signing_key: string };
  let client: MerchantWalletClient;
  let member: any;
  const clientOf = (svc: ServiceProcess) =>
    new MerchantWalletClient({
      baseUrl: `http://api-sandbox.localhost:${new URL(svc.publicUrl).port}`,
      connectHost: '127.0.0.1',
      clientId: creds.client_id,
      apiKey: creds.api_key,
      signingKey: creds.signing_key,
    });
  before(async () => {
    first = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'info' });
  });
  after(async () => {
    if (first?.child.exitCode === null) {
      first.child.kill('SIGKILL');
      await first.exited;
    }
  });

  it('first start creates the demo merchant and the admin token, prints them, and serves', async () => {
    creds = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8'));
    assert.match(creds.client_id, /^cli_/);
    assert.ok(first.output().includes(creds.api_key), 'credentials printed once at first start');
    assert.ok(existsSync(join(dataDir, 'admin-token')));
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const ready = await rawRequest(`${first.adminUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal((await rawRequest(`${first.publicUrl}/healthz`)).status, 200);
    const metrics = await rawRequest(`${first.adminUrl}/metrics`);
    assert.match(metrics.text, /http_request_duration_seconds/);
    const unauthorised = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, {
      method: 'POST',
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(unauthorised.status, 401);
    const authorised = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, {
      method: 'POST',
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    });
    assert.equal(authorised.status, 201);
    client = clientOf(first);
    member = await client.members.create({ external_member_id: 'demo-1' });
    assert.equal(member.status, 'active');
  });

  it('a first start says what it is doing while it prepares the database, and when it has started', () => {
    const messages = logLines(first.output()).map((l) => l.msg);
    for (const step of [
      /^starting: creating the embedded database/,
      /^migrating the database schema/,
      /^database schema migrated$/,
      /^created the demo merchant/,
      /^started$/,
    ]) {
      assert.ok(
        messages.some((m) => step.test(m)),
        `a line matching ${step}: ${JSON.stringify(messages)}`,
      );
    }
  });

  it('logs JSON lines with the request id and never the credentials, tokens or signatures', async () => {
    // The request's last log line is written after the answer: wait for it (bounded), not a fixed time.
    const { token, answer: raw } = await loggedMemberCreate(first, client, 'logged', 'request completed');
    const requestLines = logLines(first.output()).filter((l) => l.reqId === raw.headers['x-request-id']);
    // One line per request at info: what it was and who sent it, no header.
    assert.equal(requestLines.length, 1, JSON.stringify(requestLines));
    const [line] = requestLines;
    assert.equal(line.level, 30);
    assert.equal(line.msg, 'request completed');
    assert.deepEqual(
      {
        method: line.method,
        route: line.route,
        status: line.status,
        merchantId: line.merchantId,
        environment: line.environment,
      },
      {
        method: 'POST',
        route: '/v1/members',
        status: 201,
        merchantId: (creds as unknown as { merchant_id: string }).merchant_id,
        environment: 'sandbox',
      },
    );
    assert.match(line.keyId, /^key_/);
    assert.equal(typeof line.durationMs, 'number');
    assert.equal(line.req, undefined);
    assert.equal(line.headers, undefined);
    const text = first.output().slice(first.output().indexOf('Merchant Wallet API on'));
    for (const secret of [creds.api_key, creds.signing_key, token])
      assert.ok(!text.includes(secret), 'no secret in the logs');
    assert.ok(!/"authorization"|"x-signature"|"user-agent"/.test(text), 'no header at info');
  });

  it(
    'logs a path that matched no route with its ids and tickets redacted (a mistyped hosted-screen path ' +
      'carries a ticket)',
    async () => {
      const ticket = `kyc_${'5e'.repeat(16)}`;
      const res = await rawRequest(
        `${first.publicUrl}/v1//sandbox/hosted-screens/${ticket}/complete?token=abc123secret`,
        { method: 'POST', headers: { host: 'api-sandbox.localhost' } },
      );
      assert.equal(res.status, 404);
      const logged = await loggedLine(first, (l) => l.reqId === res.headers['x-request-id']);
      assert.equal(logged?.route, '/v1//sandbox/hosted-screens/:redacted/complete');
      assert.ok(!first.output().includes(ticket), 'the ticket id is not in the logs');
      assert.ok(!first.output().includes('abc123secret'), 'nor the query');
    },
  );

  it(
    'never logs a console invite link or a hosted screen link: each is a credential (the invite token is ' +
      'stored only as a hash)',
    async () => {
      const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
      const asOperator = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
      const merchant = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, {
        method: 'POST',
        headers: asOperator,
        body: JSON.stringify({ name: 'Invited' }),
      });
      const invited = await rawRequest(`${first.adminUrl}/admin/v1/merchants/${merchant.body.id}/console-users`, {
        method: 'POST',
        headers: asOperator,
        body: JSON.stringify({ email: 'invited@example.com', role: 'viewer' }),
      });
      assert.equal(invited.status, 201);
      const token = String(invited.body.invite_path).split('/').pop()!;
      const page = await rawRequest(`${first.publicUrl}${invited.body.invite_path}`);
      assert.equal(page.status, 200);
      const done = () => first.output().includes(String(page.headers['x-request-id']));
      for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline;)
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(done(), 'the request was logged');
      assert.ok(!first.output().includes(token), 'the invite token is not in the logs');
      // Nor a hosted screen's link: whoever holds it opens the screen (a card reveal shows number and CVV).
      const ticket = await client.kyc.createSession({ onBehalfOf: member.id });
      const link = new URL(ticket.hosted_url);
      const hosted = await rawRequest(`${first.publicUrl}${link.pathname}`, { headers: { host: link.host } });
      const logged = () => first.output().includes(String(hosted.headers['x-request-id']));
      for (const deadline = Date.now() + 10_000; !logged() && Date.now() < deadline;)
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(logged(), 'the hosted request was logged');
      assert.ok(!first.output().includes(ticket.id), 'the ticket id is not in the logs');
    },
  );

  it('on SIGTERM finishes the requests in flight, then exits 0', async () => {
    await client.getToken();
    const inFlight = Array.from({ length: 10 }, (_, i) =>
      client.requestRaw({ method: 'POST', path: '/v1/members', body: { external_member_id: `t-${i}` } }),
    );
    await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGTERM');
    const signalled = performance.now();
    const results = await Promise.allSettled(inFlight);
    assert.equal(await first.exited, 0);
    // Not the keep-alive timeout (72 s) of the connections that were answering.
    assert.ok(
      performance.now() - signalled < 10_000,
      `exited ${Math.round(performance.now() - signalled)} ms after SIGTERM`,
    );
    for (const r of results) {
      // Every request that reached the server got its full answer; none was cut off half-way.
      if (r.status === 'fulfilled') assert.ok([201, 500].includes(r.value.status), String(r.value.status));
    }
    assert.ok(
      results.some((r) => r.status === 'fulfilled' && r.value.status === 201),
      'requests in flight completed',
    );
  });

  it('a second start on the same DATA_DIR reuses the demo merchant and the data', async () => {
    const second = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: '' });
    try {
      assert.ok(!second.output().includes('Demo merchant'), 'no second demo merchant');
      const kept = await clientOf(second).request<any>({ method: 'GET', path: '/v1/members/demo-1' });
      assert.equal(kept.id, member.id, 'the embedded database in DATA_DIR kept the data');
      assert.equal(await second.stop(), 0);
    } finally {
      second.child.kill('SIGKILL');
    }
  });

  it(
    'SIGTERM with a connection that never finishes: /readyz 503 meanwhile, headers only at debug (redacted), ' +
      'the process exits after SHUTDOWN_TIMEOUT_MS logging what it cut short',
    async () => {
      const shutdownTimeoutMs = 1_500;
      const third = await spawnService({
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        LOG_LEVEL: 'debug',
        SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
      });
      try {
        const { token, line: incomingLine } = await loggedMemberCreate(
          third,
          clientOf(third),
          'debug-headers',
          'incoming request',
        );

        // Headers sent, the body never completed: the drain cannot end by itself.
        const { port } = new URL(third.publicUrl);
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {});
        await new Promise((r) => socket.once('connect', r));
        socket.write(
          'POST /v1/connect/token HTTP/1.1\r\nHost: api-sandbox.localhost\r\nContent-Type: ' +
            'application/json\r\nContent-Length: 100\r\n\r\n{',
        );
        await new Promise((r) => setTimeout(r, 200));
        third.child.kill('SIGTERM');
        const signalled = performance.now();
        // The operator listener stays open during the drain and its probe says: not ready.
        const probe = () =>
          rawRequest(`${third.adminUrl}/readyz`).catch((err: NodeJS.ErrnoException) => ({
            status: err.code,
            body: undefined,
          }));
        let ready = await probe();
        for (const deadline = Date.now() + 1_000; ready.status === 200 && Date.now() < deadline;) ready = await probe();
        const exit = await Promise.race([
          third.exited,
          new Promise((r) => setTimeout(r, shutdownTimeoutMs + 5_000, 'still running')),
        ]);
        const tookMs = performance.now() - signalled;
        assert.equal(exit, 0, `${Math.round(tookMs)} ms after SIGTERM`);
        assert.ok(tookMs >= shutdownTimeoutMs - 100, `exited ${Math.round(tookMs)} ms after SIGTERM, before the bound`);
        assert.equal(ready.status, 503);
        assert.deepEqual(ready.body, { ok: false, draining: true });
        const cut = logLines(third.output()).find((l) =>
          /^shutdown: the drain outlasted SHUTDOWN_TIMEOUT_MS/.test(l.msg),
        );
        assert.ok(cut, 'the cut is logged');
        assert.equal(cut.level, 40);
        assert.deepEqual(
          cut.cut
            .find((c: any) => c.listener === 'public')
            ?.requests.map((r: any) => ({ method: r.method, path: r.path, receiving: r.receiving })),
          [{ method: 'POST', path: '/v1/connect/token', receiving: true }],
        );
        const messages = logLines(third.output()).map((l) => l.msg);
        for (const step of ['shutdown: signal received', 'shutdown: done']) assert.ok(messages.includes(step), step);
        socket.destroy();
        // The signed request of the start, as logged at debug when it arrived.
        assert.equal(incomingLine?.level, 20, 'the request and its headers at debug');
        assert.equal(incomingLine?.req.headers.authorization, '[redacted]');
        assert.equal(incomingLine?.req.headers['x-signature'], '[redacted]');
        assert.ok(!third.output().includes(token), 'the token is not in the logs');
      } finally {
        third.child.kill('SIGKILL');
      }
    },
  );
});

/** The JSON lines of a process's output. */
function logLines(output: string): any[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{') && l.endsWith('}'))
    .map((l) => JSON.parse(l));
}

/**
 * The first log line of `p` that `matches`, waited for (at most 10 s, then undefined): a request's lines are
 * written after its answer.
 */
async function loggedLine(p: ServiceProcess, matches: (line: any) => boolean): Promise<any> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const line = logLines(p.output()).find(matches);
    if (line) return line;
  }
  return undefined;
}

/**
 * `client` signs in and creates member `externalId` on process `p` (201): its token, the answer and the
 * answer's log line with message `msg`.
 */
async function loggedMemberCreate(p: ServiceProcess, client: MerchantWalletClient, externalId: string, msg: string) {
  const token = await client.getToken();
  const answer = await client.requestRaw({
    method: 'POST',
    path: '/v1/members',
    body: { external_member_id: externalId },
  });
  assert.equal(answer.status, 201);
  const line = await loggedLine(p, (l) => l.reqId === answer.headers['x-request-id'] && l.msg === msg);
  return { token, answer, line };
}
