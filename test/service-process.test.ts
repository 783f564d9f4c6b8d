import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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
  const clientOf = (svc: ServiceProcess) => new MerchantWalletClient({
    baseUrl: `http://api-sandbox.localhost:${new URL(svc.publicUrl).port}`, connectHost: '127.0.0.1',
    clientId: creds.client_id, apiKey: creds.api_key, signingKey: creds.signing_key,
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
    const unauthorised = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, { method: 'POST', body: '{"name":"x"}', headers: { 'content-type': 'application/json' } });
    assert.equal(unauthorised.status, 401);
    const authorised = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, { method: 'POST', body: '{"name":"x"}', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` } });
    assert.equal(authorised.status, 201);
    client = clientOf(first);
    member = await client.members.create({ external_member_id: 'demo-1' });
    assert.equal(member.status, 'active');
  });

  it('logs JSON lines with the request id and never the credentials, tokens or signatures', async () => {
    const token = await client.getToken();
    const raw = await client.requestRaw({ method: 'POST', path: '/v1/members', body: { external_member_id: 'logged' } });
    assert.equal(raw.status, 201);
    // The request's last log line is written after the answer: wait for it (bounded), not a fixed time.
    const completed = () => first.output().split('\n').some((l) => l.startsWith('{') && l.includes(String(raw.headers['x-request-id'])) && l.includes('"request completed"') && l.endsWith('}'));
    for (const deadline = Date.now() + 10_000; !completed() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    const lines = first.output().split('\n').filter((l) => l.startsWith('{'));
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.reqId === raw.headers['x-request-id']);
    assert.ok(requestLines.length >= 1, 'the request id is on the log lines');
    const text = first.output().slice(first.output().indexOf('Merchant Wallet API on'));
    for (const secret of [creds.api_key, creds.signing_key, token]) assert.ok(!text.includes(secret), 'no secret in the logs');
    assert.match(text, /\[redacted\]/);
  });

  it('never logs a console invite link or a hosted screen link: each is a credential (the invite token is stored only as a hash)', async () => {
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const asOperator = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    const merchant = await rawRequest(`${first.adminUrl}/admin/v1/merchants`, { method: 'POST', headers: asOperator, body: JSON.stringify({ name: 'Invited' }) });
    const invited = await rawRequest(`${first.adminUrl}/admin/v1/merchants/${merchant.body.id}/console-users`, {
      method: 'POST', headers: asOperator, body: JSON.stringify({ email: 'invited@example.com', role: 'viewer' }),
    });
    assert.equal(invited.status, 201);
    const token = String(invited.body.invite_path).split('/').pop()!;
    const page = await rawRequest(`${first.publicUrl}${invited.body.invite_path}`);
    assert.equal(page.status, 200);
    const done = () => first.output().includes(String(page.headers['x-request-id']));
    for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    assert.ok(done(), 'the request was logged');
    assert.ok(!first.output().includes(token), 'the invite token is not in the logs');
    // Nor a hosted screen's link: whoever holds it opens the screen (a card reveal shows number and CVV).
    const ticket = await client.kyc.createSession({ onBehalfOf: member.id });
    const link = new URL(ticket.hosted_url);
    const hosted = await rawRequest(`${first.publicUrl}${link.pathname}`, { headers: { host: link.host } });
    const logged = () => first.output().includes(String(hosted.headers['x-request-id']));
    for (const deadline = Date.now() + 10_000; !logged() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    assert.ok(logged(), 'the hosted request was logged');
    assert.ok(!first.output().includes(ticket.id), 'the ticket id is not in the logs');
  });

  it('on SIGTERM finishes the requests in flight, then exits 0', async () => {
    await client.getToken();
    const inFlight = Array.from({ length: 10 }, (_, i) => client.requestRaw({ method: 'POST', path: '/v1/members', body: { external_member_id: `t-${i}` } }));
    await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGTERM');
    const signalled = performance.now();
    const results = await Promise.allSettled(inFlight);
    assert.equal(await first.exited, 0);
    // Not the keep-alive timeout (72 s) of the connections that were answering.
    assert.ok(performance.now() - signalled < 10_000, `exited ${Math.round(performance.now() - signalled)} ms after SIGTERM`);
    for (const r of results) {
      // Every request that reached the server got its full answer; none was cut off half-way.
      if (r.status === 'fulfilled') assert.ok([201, 500].includes(r.value.status), String(r.value.status));
    }
    assert.ok(results.some((r) => r.status === 'fulfilled' && r.value.status === 201), 'requests in flight completed');
  });

  it('a second start on the same DATA_DIR reuses the demo merchant and the data', async () => {
    const second = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: '' });
    try {
      assert.ok(!second.output().includes('Demo merchant'), 'no second demo merchant');
      const kept = await clientOf(second).request<any>({ method: 'GET', path: '/v1/members/demo-1' });
      assert.equal(kept.id, member.id, 'the embedded database in DATA_DIR kept the data');
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    } finally {
      second.child.kill('SIGKILL');
    }
  });
});
