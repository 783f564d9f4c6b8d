import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { rawRequest, signedPost } from './support/raw-http.js';
import { spawnService, type ServiceProcess } from './support/process.js';
import { postgresOnly } from './support/service.js';

const databaseUrl = process.env.TEST_DATABASE_URL ?? '';

describe('two server processes on one PostgreSQL behave as one', { skip: postgresOnly() }, () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  const adminToken = `adm_${randomUUID()}`;
  let creds: { merchant: string; clientId: string; apiKey: string; signingKey: string };

  /** A call of the operator API on process `p` (A unless named). */
  const admin = (method: string, path: string, body: unknown, p = a) =>
    rawRequest(`${p.adminUrl}${path}`, {
      method,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    });
  interface Key {
    id: string;
    client_id: string;
    api_key: string;
    signing_key: string;
  }
  /** A new sandbox key of merchant `merchant` (the suite's unless named) holding `scopes`, made through `p`. */
  const newKey = async (scopes: string[], merchant = creds.merchant, p = a): Promise<Key> =>
    (await admin('POST', `/admin/v1/merchants/${merchant}/api-keys`, { environment: 'sandbox', scopes }, p)).body;

  before(async () => {
    const env = { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken };
    a = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-a-')) });
    b = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-b-')) });
    const merchant = (await admin('POST', '/admin/v1/merchants', { name: 'two processes' })).body;
    const key = await newKey(['members:write'], merchant.id);
    creds = { merchant: merchant.id, clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key };
  });
  after(async () => {
    a?.child.kill('SIGTERM');
    b?.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
  });

  const hostOf = (p: ServiceProcess) => `api-sandbox.localhost:${new URL(p.publicUrl).port}`;

  /** A bearer token for `key` (the suite's unless named) from process `p`. */
  const tokenAt = (p: ServiceProcess, key = { client_id: creds.clientId, api_key: creds.apiKey }) =>
    rawRequest(`${p.publicUrl}/v1/connect/token`, {
      method: 'POST',
      headers: { host: hostOf(p), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
    });
  async function token(p: ServiceProcess, key?: Pick<Key, 'client_id' | 'api_key'>): Promise<string> {
    const res = await tokenAt(p, key);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.auth_token;
  }
  /** Where a signed request to process `p` with token `tok` goes (signed with the suite's key unless named). */
  const signedTo = (p: ServiceProcess, tok: string, signingKey = creds.signingKey) => ({
    publicUrl: p.publicUrl,
    host: hostOf(p),
    token: tok,
    signingKey,
  });
  /** A read of an unknown member on process `p` with token `tok`: 404 while the token is good. */
  const readNobody = (p: ServiceProcess, tok: string) => () =>
    rawRequest(`${p.publicUrl}/v1/members/nobody`, { headers: { host: hostOf(p), authorization: `Bearer ${tok}` } });

  it('consumes one nonce once across both processes', async () => {
    const [ta, tb] = [await token(a), await token(b)];
    const nonce = randomUUID();
    const results = await Promise.all([
      signedPost(signedTo(a, ta), '/v1/members', JSON.stringify({ external_member_id: 'n-a' }), { nonce }),
      signedPost(signedTo(b, tb), '/v1/members', JSON.stringify({ external_member_id: 'n-b' }), { nonce }),
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
      Array.from({ length: 10 }, (_, i) =>
        signedPost(i % 2 ? signedTo(a, ta) : signedTo(b, tb), '/v1/members', body, { key }),
      ),
    );
    for (const r of results)
      assert.ok(
        r.status === 201 || (r.status === 409 && r.body.code === 'idempotency_in_progress'),
        JSON.stringify(r.body),
      );
    assert.equal(results.filter((r) => r.status === 201 && r.headers['x-idempotent-replay'] === undefined).length, 1);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM members WHERE merchant_id = $1 AND external_member_id = $2',
      [creds.merchant, 'idem-two'],
    );
    await db.end();
    assert.equal(rows[0].n, 1);
  });

  /**
   * The other process learns of a change by the database's notification, which PostgreSQL sends at
   * the commit, before the operator's answer leaves: it normally arrives before the next request,
   * but nothing orders the two sockets, so the wait is bounded (docs/performance.md).
   */
  const propagationMsMax = 1_000;
  async function until(
    request: () => Promise<{ status: number; body: any }>,
    done: (r: { status: number; body: any }) => boolean,
  ) {
    const started = performance.now();
    for (;;) {
      const r = await request();
      if (done(r) || performance.now() - started > propagationMsMax) return r;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  it('refuses a key disabled or re-scoped through the operator API at once in the other process', async () => {
    const key = await newKey(['members:read', 'members:write']);
    const tok = await token(b, key);
    const read = readNobody(b, tok);
    // Process B now holds the token's state in memory.
    for (let i = 0; i < 3; i++) assert.equal((await read()).body.code, 'member_not_found');

    // Re-scoped on process A: B refuses the read scope.
    assert.equal((await admin('PATCH', `/admin/v1/api-keys/${key.id}`, { scopes: ['deposits:read'] })).status, 200);
    const rescoped = await until(read, (r) => r.status === 403);
    assert.equal(rescoped.body.code, 'insufficient_scope', JSON.stringify(rescoped.body));
    assert.equal(
      (await admin('PATCH', `/admin/v1/api-keys/${key.id}`, { scopes: ['members:read', 'members:write'] })).status,
      200,
    );
    assert.equal((await until(read, (r) => r.status === 404)).body.code, 'member_not_found');

    // Disabled on process A: B refuses the token, and keeps refusing it.
    assert.equal((await admin('PATCH', `/admin/v1/api-keys/${key.id}`, { disabled: true })).status, 200);
    const refused = await until(read, (r) => r.status === 401);
    assert.equal(refused.body.code, 'invalid_token', JSON.stringify(refused.body));
    for (let i = 0; i < 3; i++) assert.equal((await read()).body.code, 'invalid_token');

    // The merchant frozen on A: B refuses its requests too.
    const other = (await admin('POST', '/admin/v1/merchants', { name: 'frozen later' })).body;
    const otherKey = await newKey(['members:read'], other.id);
    const otherTok = await token(b, otherKey);
    const otherRead = readNobody(b, otherTok);
    assert.equal((await otherRead()).body.code, 'member_not_found');
    assert.equal((await admin('PATCH', `/admin/v1/merchants/${other.id}`, { status: 'frozen' })).status, 200);
    assert.equal((await until(otherRead, (r) => r.status === 403)).body.code, 'merchant_disabled');
  });

  it('refuses a member suspended through one process at once in the other (on behalf of it)', async () => {
    const key = await newKey(['members:read', 'members:write', 'balances:read']);
    const tokA = await token(a, key);
    const tokB = await token(b, key);
    const to = signedTo(a, tokA, key.signing_key);
    const post = (path: string, body: string) => signedPost(to, path, body);
    const external = `mp-${randomUUID()}`;
    const created = await post('/v1/members', JSON.stringify({ external_member_id: external }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const read = () =>
      rawRequest(`${b.publicUrl}/v1/balances`, {
        headers: { host: hostOf(b), authorization: `Bearer ${tokB}`, 'x-on-behalf-of': external },
      });
    // Process B now holds the member in memory.
    for (let i = 0; i < 3; i++) assert.equal((await read()).status, 200);

    const suspended = await post(`/v1/members/${created.body.id}/suspend`, '');
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
    const refused = await until(read, (r) => r.status === 404);
    assert.equal(refused.body.code, 'member_not_found', JSON.stringify(refused.body));
    for (let i = 0; i < 3; i++) assert.equal((await read()).body.code, 'member_not_found');
  });

  it('refuses an asset disabled through the operator API on one process at once in the other', async () => {
    const key = await newKey(['members:write', 'deposits:write']);
    const tokB = await token(b, key);
    const to = signedTo(b, tokB, key.signing_key);
    const post = (path: string, body: string) => signedPost(to, path, body);
    const member = await post('/v1/members', JSON.stringify({ external_member_id: `asset-${randomUUID()}` }));
    assert.equal(member.status, 201, JSON.stringify(member.body));
    const deposit = () =>
      post(
        '/v1/deposits',
        JSON.stringify({
          member_id: member.body.id,
          asset: 'USDT',
          amount: '1',
          tx_hash: `0x${randomUUID().replace(/-/g, '')}`,
        }),
      );
    // Process B now holds the catalogue's USDT.
    for (let i = 0; i < 2; i++) assert.equal((await deposit()).status, 201);
    assert.equal((await admin('PATCH', '/admin/v1/assets/USDT', { enabled: false })).status, 200);
    try {
      const refused = await until(deposit, (r) => r.status !== 201);
      assert.equal(refused.body.code, 'asset_not_allowed', JSON.stringify(refused.body));
    } finally {
      assert.equal((await admin('PATCH', '/admin/v1/assets/USDT', { enabled: true })).status, 200);
    }
    assert.equal((await until(deposit, (r) => r.status === 201)).status, 201);
  });

  it('reads the database per request while its notification connection is down', async () => {
    const key = await newKey(['members:read']);
    const tok = await token(b, key);
    const read = readNobody(b, tok);
    assert.equal((await read()).body.code, 'member_not_found');
    // Cut B's (and A's) LISTEN connections: a change then has no notification to carry it.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity
        WHERE datname = current_database() AND query = 'LISTEN mwa_auth' AND pid <> pg_backend_pid()`);
      assert.ok(rows.length >= 2, 'both processes listen');
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Disabled behind the processes' backs, straight in the table, while nobody listens.
      await db.query('UPDATE api_keys SET disabled = true, token_generation = token_generation + 1 WHERE id = $1', [
        key.id,
      ]);
      const refused = await read();
      assert.equal(refused.status, 401, JSON.stringify(refused.body));
    } finally {
      await db.end();
    }
  });

  it('shares one rate window: 20 token exchanges a minute in total', async () => {
    const key = await newKey(['members:write'], creds.merchant, b);
    if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200));
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const p = i % 2 ? a : b;
        return tokenAt(p, key);
      }),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 20);
    assert.equal(results.filter((r) => r.status === 429).length, 10);
  });
});
