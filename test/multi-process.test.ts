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

describe(
  'two server processes on one PostgreSQL behave as one',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL=postgres://...' },
  () => {
    let a: ServiceProcess;
    let b: ServiceProcess;
    const adminToken = `adm_${randomUUID()}`;
    let creds: { merchant: string; clientId: string; apiKey: string; signingKey: string };

    before(async () => {
      const env = { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken };
      a = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-a-')) });
      b = await spawnService({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'mwa-b-')) });
      const call = (path: string, body: unknown) =>
        rawRequest(`${a.adminUrl}${path}`, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const merchant = (await call('/admin/v1/merchants', { name: 'two processes' })).body;
      const key = (
        await call(`/admin/v1/merchants/${merchant.id}/api-keys`, { environment: 'sandbox', scopes: ['members:write'] })
      ).body;
      creds = { merchant: merchant.id, clientId: key.client_id, apiKey: key.api_key, signingKey: key.signing_key };
    });
    after(async () => {
      a?.child.kill('SIGTERM');
      b?.child.kill('SIGTERM');
      await Promise.all([a?.exited, b?.exited]);
    });

    const hostOf = (p: ServiceProcess) => `api-sandbox.localhost:${new URL(p.publicUrl).port}`;

    async function token(p: ServiceProcess): Promise<string> {
      const res = await rawRequest(`${p.publicUrl}/v1/connect/token`, {
        method: 'POST',
        headers: { host: hostOf(p), 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.auth_token;
    }

    function signedMemberPost(p: ServiceProcess, tok: string, opts: { body: string; nonce: string; key: string }) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      return rawRequest(`${p.publicUrl}/v1/members`, {
        method: 'POST',
        body: opts.body,
        headers: {
          host: hostOf(p),
          authorization: `Bearer ${tok}`,
          'content-type': 'application/json',
          'x-idempotency-key': opts.key,
          'x-timestamp': timestamp,
          'x-nonce': opts.nonce,
          'x-signature': signRequest({
            method: 'POST',
            pathWithQuery: '/v1/members',
            timestamp,
            nonce: opts.nonce,
            rawBody: opts.body,
            signingKey: creds.signingKey,
          }),
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
        Array.from({ length: 10 }, (_, i) =>
          signedMemberPost(i % 2 ? a : b, i % 2 ? ta : tb, { body, nonce: randomUUID(), key }),
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
      const admin = (method: string, path: string, body: unknown) =>
        rawRequest(`${a.adminUrl}${path}`, {
          method,
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const key = (
        await admin('POST', `/admin/v1/merchants/${creds.merchant}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:read', 'members:write'],
        })
      ).body;
      const tok = (
        await rawRequest(`${b.publicUrl}/v1/connect/token`, {
          method: 'POST',
          headers: { host: hostOf(b), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
        })
      ).body.auth_token;
      const read = () =>
        rawRequest(`${b.publicUrl}/v1/members/nobody`, {
          headers: { host: hostOf(b), authorization: `Bearer ${tok}` },
        });
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
      const otherKey = (
        await admin('POST', `/admin/v1/merchants/${other.id}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:read'],
        })
      ).body;
      const otherTok = (
        await rawRequest(`${b.publicUrl}/v1/connect/token`, {
          method: 'POST',
          headers: { host: hostOf(b), 'x-client-id': otherKey.client_id, 'x-api-key': otherKey.api_key },
        })
      ).body.auth_token;
      const otherRead = () =>
        rawRequest(`${b.publicUrl}/v1/members/nobody`, {
          headers: { host: hostOf(b), authorization: `Bearer ${otherTok}` },
        });
      assert.equal((await otherRead()).body.code, 'member_not_found');
      assert.equal((await admin('PATCH', `/admin/v1/merchants/${other.id}`, { status: 'frozen' })).status, 200);
      assert.equal((await until(otherRead, (r) => r.status === 403)).body.code, 'merchant_disabled');
    });

    it('refuses a member suspended through one process at once in the other (on behalf of it)', async () => {
      const admin = (method: string, path: string, body: unknown) =>
        rawRequest(`${a.adminUrl}${path}`, {
          method,
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const key = (
        await admin('POST', `/admin/v1/merchants/${creds.merchant}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:read', 'members:write', 'balances:read'],
        })
      ).body;
      const tokenOn = async (p: ServiceProcess) =>
        (
          await rawRequest(`${p.publicUrl}/v1/connect/token`, {
            method: 'POST',
            headers: { host: hostOf(p), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
          })
        ).body.auth_token as string;
      const tokA = await tokenOn(a);
      const tokB = await tokenOn(b);
      const signedPost = (path: string, body: string) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const nonce = randomUUID();
        return rawRequest(`${a.publicUrl}${path}`, {
          method: 'POST',
          body,
          headers: {
            host: hostOf(a),
            authorization: `Bearer ${tokA}`,
            'content-type': 'application/json',
            'x-idempotency-key': randomUUID(),
            'x-timestamp': timestamp,
            'x-nonce': nonce,
            'x-signature': signRequest({
              method: 'POST',
              pathWithQuery: path,
              timestamp,
              nonce,
              rawBody: body,
              signingKey: key.signing_key,
            }),
          },
        });
      };
      const external = `mp-${randomUUID()}`;
      const created = await signedPost('/v1/members', JSON.stringify({ external_member_id: external }));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const read = () =>
        rawRequest(`${b.publicUrl}/v1/balances`, {
          headers: { host: hostOf(b), authorization: `Bearer ${tokB}`, 'x-on-behalf-of': external },
        });
      // Process B now holds the member in memory.
      for (let i = 0; i < 3; i++) assert.equal((await read()).status, 200);

      const suspended = await signedPost(`/v1/members/${created.body.id}/suspend`, '');
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      const refused = await until(read, (r) => r.status === 404);
      assert.equal(refused.body.code, 'member_not_found', JSON.stringify(refused.body));
      for (let i = 0; i < 3; i++) assert.equal((await read()).body.code, 'member_not_found');
    });

    it('refuses an asset disabled through the operator API on one process at once in the other', async () => {
      const admin = (method: string, path: string, body: unknown) =>
        rawRequest(`${a.adminUrl}${path}`, {
          method,
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const key = (
        await admin('POST', `/admin/v1/merchants/${creds.merchant}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:write', 'deposits:write'],
        })
      ).body;
      const tokB = (
        await rawRequest(`${b.publicUrl}/v1/connect/token`, {
          method: 'POST',
          headers: { host: hostOf(b), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
        })
      ).body.auth_token;
      const signedPost = (path: string, body: string) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const nonce = randomUUID();
        return rawRequest(`${b.publicUrl}${path}`, {
          method: 'POST',
          body,
          headers: {
            host: hostOf(b),
            authorization: `Bearer ${tokB}`,
            'content-type': 'application/json',
            'x-idempotency-key': randomUUID(),
            'x-timestamp': timestamp,
            'x-nonce': nonce,
            'x-signature': signRequest({
              method: 'POST',
              pathWithQuery: path,
              timestamp,
              nonce,
              rawBody: body,
              signingKey: key.signing_key,
            }),
          },
        });
      };
      const member = await signedPost('/v1/members', JSON.stringify({ external_member_id: `asset-${randomUUID()}` }));
      assert.equal(member.status, 201, JSON.stringify(member.body));
      const deposit = () =>
        signedPost(
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
      const admin = (method: string, path: string, body: unknown) =>
        rawRequest(`${a.adminUrl}${path}`, {
          method,
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const key = (
        await admin('POST', `/admin/v1/merchants/${creds.merchant}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:read'],
        })
      ).body;
      const tok = (
        await rawRequest(`${b.publicUrl}/v1/connect/token`, {
          method: 'POST',
          headers: { host: hostOf(b), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
        })
      ).body.auth_token;
      const read = () =>
        rawRequest(`${b.publicUrl}/v1/members/nobody`, {
          headers: { host: hostOf(b), authorization: `Bearer ${tok}` },
        });
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
      const merchantCall = (path: string, body: unknown) =>
        rawRequest(`${b.adminUrl}${path}`, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        });
      const key = (
        await merchantCall(`/admin/v1/merchants/${creds.merchant}/api-keys`, {
          environment: 'sandbox',
          scopes: ['members:write'],
        })
      ).body;
      if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200));
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const p = i % 2 ? a : b;
          return rawRequest(`${p.publicUrl}/v1/connect/token`, {
            method: 'POST',
            headers: { host: hostOf(p), 'x-client-id': key.client_id, 'x-api-key': key.api_key },
          });
        }),
      );
      assert.equal(results.filter((r) => r.status === 200).length, 20);
      assert.equal(results.filter((r) => r.status === 429).length, 10);
    });
  },
);
