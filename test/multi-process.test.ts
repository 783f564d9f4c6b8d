import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { signRequest } from '@merchant-wallet/sdk';
import pg from 'pg';
import { rawRequest } from './support/raw-http.js';
import { spawnService, type ServiceProcess } from './support/process.js';

const databaseUrl = process.env.TEST_DATABASE_URL ?? '';
const onPostgres = /^postgres(ql)?:\/\//.test(databaseUrl);

describe('two server processes on one PostgreSQL behave as one', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  const adminToken = `adm_${randomUUID()}`;
  let creds: { merchant: string; clientId: string; apiKey: string; signingKey: string };

  before(async () => {
    const env = { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken };
    a = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-a-')) });
    b = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-b-')) });
    const call = (path: string, body: unknown) =>
      rawRequest(`${a.adminUrl}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` } });
    const merchant = (await call('/admin/v1/merchants', { name: 'two processes' })).body;
    const key = (await call(`/admin/v1/merchants/${merchant.id}/api-keys`, { environment: 'sandbox', scopes: ['members:write'] })).body;
    creds = { merchant: merchant.id, clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key };
  });
  after(async () => {
    a?.child.kill('SIGTERM');
    b?.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
  });

  const hostOf = (p: ServiceProcess) => `api-sandbox.localhost:${new URL(p.publicUrl).port}`;

  async function token(p: ServiceProcess): Promise<string> {
    const res = await rawRequest(`${p.publicUrl}/v1/connect/token`, { method: 'POST', headers: { host: hostOf(p), 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.auth_token;
  }

  function signedMemberPost(p: ServiceProcess, tok: string, opts: { body: string; nonce: string; key: string }) {
    const timestamp = String(Math.floor(Date.now() / 1000));
    return rawRequest(`${p.publicUrl}/v1/members`, {
      method: 'POST',
      body: opts.body,
      headers: {
        host: hostOf(p), authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'x-idempotency-key': opts.key,
        'x-timestamp': timestamp, 'x-nonce': opts.nonce,
        'x-signature': signRequest({ method: 'POST', pathWithQuery: '/v1/members', timestamp, nonce: opts.nonce, rawBody: opts.body, signingKey: creds.signingKey }),
      },
    });
  }

  it('consumes one nonce once across both processes', async () => {
    const [ta, tb] = [await token(a), await token(b)];
    const nonce = randomUUID();
    const results = await Promise.all([
      signedMemberPost(a, ta, { body: JSON.stringify({ external_member_id: 'n-a' }), nonce, key: randomUUID() }),
      signedMemberPost(b, tb, { body: JSON.stringify({ external_member_id: 'n-b' }), nonce, key: randomUUID() }),
    ]);
    const codes = results.map((r) => r.status).sort();
    assert.deepEqual(codes, [201, 401]);
    assert.equal(results.find((r) => r.status === 401)!.body.code, 'nonce_reused');
  });

  it('makes one effect for one idempotency key sent to both processes at once', async () => {
    const [ta, tb] = [await token(a), await token(b)];
    const key = randomUUID();
    const body = JSON.stringify({ external_member_id: 'idem-two' });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => signedMemberPost(i % 2 ? a : b, i % 2 ? ta : tb, { body, nonce: randomUUID(), key })),
    );
    for (const r of results) assert.ok(r.status === 201 || (r.status === 409 && r.body.code === 'idempotency_in_progress'), JSON.stringify(r.body));
    assert.equal(results.filter((r) => r.status === 201 && r.headers['x-idempotent-replay'] === undefined).length, 1);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query('SELECT count(*)::int AS n FROM members WHERE merchant_id = $1 AND external_member_id = $2', [creds.merchant, 'idem-two']);
    await db.end();
    assert.equal(rows[0].n, 1);
  });

  it('shares one rate window: 20 token exchanges a minute in total', async () => {
    const merchantCall = (path: string, body: unknown) =>
      rawRequest(`${b.adminUrl}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` } });
    const key = (await merchantCall(`/admin/v1/merchants/${creds.merchant}/api-keys`, { environment: 'sandbox', scopes: ['members:write'] })).body;
    if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200));
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const p = i % 2 ? a : b;
        return rawRequest(`${p.publicUrl}/v1/connect/token`, { method: 'POST', headers: { host: hostOf(p), 'x-client-id': key.client_id, 'x-api-key': key.api_key } });
      }),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 20);
    assert.equal(results.filter((r) => r.status === 429).length, 10);
  });
});
