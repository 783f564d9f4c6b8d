import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningService } from '../src/server.js';
import { rawRequest } from './support/raw-http.js';
import { expectCode } from './support/expect.js';
import {
  admin,
  clientFor,
  createKey,
  createMerchant,
  newMerchantClient,
  baseUrlFor,
  useTestService,
  keyClient,
} from './support/service.js';

async function exchange(service: RunningService, env: 'sandbox' | 'production', headers: Record<string, string>) {
  return rawRequest(`${service.publicUrl}/v1/connect/token`, {
    method: 'POST',
    headers: { host: new URL(baseUrlFor(service, env)).host, ...headers },
  });
}

describe('authentication and keys', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it('exchanges a key for a 30-minute bearer token carrying the key scopes', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['members:write', 'bogus:scope'] });
    assert.deepEqual(creds.scopes, ['members:write'], 'unknown scope keys are dropped');
    const principals = () =>
      service.ctx.db
        .selectFrom('merchant_principals')
        .select('environment')
        .where('merchant_id', '=', merchantId)
        .execute();
    assert.deepEqual(await principals(), [], 'no sandbox principal before the first exchange');
    const res = await exchange(service, 'sandbox', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
    assert.equal(res.status, 200);
    assert.deepEqual(await principals(), [{ environment: 'sandbox' }], 'created lazily at the first sandbox exchange');
    assert.equal(res.body.token_type, 'Bearer');
    assert.deepEqual(res.body.scopes, ['members:write']);
    const ttl = res.body.expired_at - Math.floor(Date.now() / 1000);
    assert.ok(ttl > 1790 && ttl <= 1800, `ttl ${ttl}`);
  });

  it('refuses wrong credentials, the signing key in place of the api key, and the other environment', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId);
    const wrong = await exchange(service, 'sandbox', { 'x-client-id': creds.clientId, 'x-api-key': 'mwk_nope' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'invalid_credentials');
    assert.equal(wrong.body.type, 'authentication_error');
    assert.equal(wrong.body.request_id, wrong.headers['x-request-id']);
    const signing = await exchange(service, 'sandbox', {
      'x-client-id': creds.clientId,
      'x-api-key': creds.signingKey,
    });
    assert.equal(signing.body.code, 'invalid_credentials');
    const missing = await exchange(service, 'sandbox', { 'x-client': creds.clientId, 'api-key': creds.apiKey });
    assert.equal(missing.body.code, 'invalid_credentials');
    const mismatch = await exchange(service, 'production', {
      'x-client-id': creds.clientId,
      'x-api-key': creds.apiKey,
    });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.code, 'environment_mismatch');
  });

  it('limits token exchanges to 20 a minute per key with Retry-After', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId);
    for (let i = 0; i < 20; i++) {
      const ok = await exchange(service, 'sandbox', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
      assert.equal(ok.status, 200, `exchange ${i + 1}`);
    }
    const limited = await exchange(service, 'sandbox', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'rate_limited');
    assert.equal(limited.body.type, 'rate_limit_error');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(limited.body.retry_after, retryAfter);
    assert.equal(limited.body.error.code, 'rate_limited');
  });

  it('accepts the token in x-auth-token or authorization, and refuses a missing or unknown one', async () => {
    const { client, creds } = await newMerchantClient(service);
    const token = await client.getToken();
    const call = (headers: Record<string, string>) =>
      rawRequest(`${service.publicUrl}/v1/members/nobody`, {
        headers: { host: new URL(baseUrlFor(service, creds.environment)).host, ...headers },
      });
    assert.equal((await call({ 'x-auth-token': `Bearer ${token}` })).status, 404);
    assert.equal((await call({ authorization: `Bearer ${token}` })).status, 404);
    const none = await call({});
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'invalid_token');
    const bogus = await call({ authorization: 'Bearer mwt_bogus' });
    assert.equal(bogus.body.code, 'invalid_token');
  });

  it('takes the merchant from the token alone; a legacy merchant header is ignored', async () => {
    const a = await newMerchantClient(service);
    const b = await newMerchantClient(service);
    await a.client.members.create({ external_member_id: 'shared-ext' });
    await expectCode(
      b.client.request({
        method: 'GET',
        path: '/v1/members/shared-ext',
        headers: { 'x-merchant-id': a.merchantId, 'x-merchant-code': a.merchantId },
      }),
      'member_not_found',
      404,
    );
  });

  it('refuses a scope the key lacks and grants one added later at once, without a new token', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['merchant:read'] });
    const client = clientFor(service, creds);
    await expectCode(client.request({ method: 'GET', path: '/v1/members/x' }), 'insufficient_scope', 403);
    const token = await client.getToken();
    await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { scopes: ['merchant:read', 'members:write'] });
    await expectCode(client.request({ method: 'GET', path: '/v1/members/x' }), 'member_not_found', 404);
    assert.equal(await client.getToken(), token, 'same token');
  });

  it(
    'keeps restricted scopes pending in production until approved, ' + 'and grants them at once in the sandbox',
    async () => {
      const merchantId = await createMerchant(service);
      const prod = await createKey(service, merchantId, {
        environment: 'production',
        scopes: ['members:write', 'deposits:write', 'cards:secure'],
      });
      assert.deepEqual(prod.scopes, ['members:write']);
      assert.deepEqual(prod.pendingScopes.sort(), ['cards:secure', 'deposits:write']);
      const approved = await admin(service, 'POST', `/admin/v1/api-keys/${prod.keyId}/approve`, {
        scopes: ['deposits:write'],
      });
      assert.equal(approved.status, 200);
      assert.deepEqual(approved.body.scopes.sort(), ['deposits:write', 'members:write']);
      assert.deepEqual(approved.body.pending_scopes, ['cards:secure']);
      assert.equal(approved.body.api_key, undefined, 'no secrets after creation');
      const sandbox = await createKey(service, merchantId, { scopes: ['deposits:write'] });
      assert.deepEqual(sandbox.scopes, ['deposits:write']);
    },
  );

  it('approves every pending scope when the approval has no body at all, as when it is {}', async () => {
    const merchantId = await createMerchant(service);
    const approve = async (keyId: string, body?: string) => {
      const res = await fetch(`${service.adminUrl}/admin/v1/api-keys/${keyId}/approve`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${service.adminToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    for (const body of [undefined, '', '{}']) {
      const prod = await createKey(service, merchantId, {
        environment: 'production',
        scopes: ['members:write', 'deposits:write', 'cards:secure'],
      });
      const approved = await approve(prod.keyId, body);
      assert.equal(approved.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(approved.body)}`);
      assert.deepEqual(
        approved.body.scopes.sort(),
        ['cards:secure', 'deposits:write', 'members:write'],
        JSON.stringify(body),
      );
      assert.deepEqual(approved.body.pending_scopes, []);
    }
    // A body that is there must still be an object.
    const prod = await createKey(service, merchantId, { environment: 'production', scopes: ['deposits:write'] });
    for (const body of ['null', '[]', '"x"']) {
      const refused = await approve(prod.keyId, body);
      assert.equal(refused.status, 400, body);
      assert.equal(refused.body.code, 'invalid_request', body);
    }
  });

  it('refuses a production key without an IP allow-list', async () => {
    const merchantId = await createMerchant(service);
    const res = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/api-keys`, {
      environment: 'production',
      scopes: ['members:write'],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'invalid_fields');
  });

  it('kills the live tokens of a disabled key at once', async () => {
    const { client, creds } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'before-disable' });
    await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { disabled: true });
    const raw = await client.requestRaw({ method: 'GET', path: '/v1/members/before-disable' });
    assert.equal(raw.status, 401);
    assert.equal(raw.body.code, 'invalid_token');
    const again = await exchange(service, 'sandbox', { 'x-client-id': creds.clientId, 'x-api-key': creds.apiKey });
    assert.equal(again.body.code, 'invalid_credentials');
  });

  it('ends a key at its expiry', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { expires_at: new Date(Date.now() + 1500).toISOString() });
    const client = clientFor(service, creds);
    await expectCode(client.request({ method: 'GET', path: '/v1/members/x' }), 'member_not_found');
    await sleep(1600);
    const raw = await client.requestRaw({ method: 'GET', path: '/v1/members/x' });
    assert.equal(raw.body.code, 'invalid_token');
  });

  it('rotates a key: both work during the overlap, then the old one stops with a hard edge', async () => {
    const merchantId = await createMerchant(service);
    const old = await createKey(service, merchantId);
    const oldClient = clientFor(service, old);
    await oldClient.getToken();
    const rotated = await admin(service, 'POST', `/admin/v1/api-keys/${old.keyId}/rotate`, { overlap_seconds: 2 });
    assert.equal(rotated.status, 201);
    assert.ok(rotated.body.api_key && rotated.body.signing_key && rotated.body.client_id !== old.clientId);
    const fresh = clientFor(service, {
      ...old,
      keyId: rotated.body.id,
      clientId: rotated.body.client_id,
      apiKey: rotated.body.api_key,
      signingKey: rotated.body.signing_key,
    });
    await expectCode(oldClient.request({ method: 'GET', path: '/v1/members/x' }), 'member_not_found');
    await expectCode(fresh.request({ method: 'GET', path: '/v1/members/x' }), 'member_not_found');
    await sleep(2200);
    const raw = await oldClient.requestRaw({ method: 'GET', path: '/v1/members/x' });
    assert.equal(raw.body.code, 'invalid_token');
    const exchangeOld = await exchange(service, 'sandbox', { 'x-client-id': old.clientId, 'x-api-key': old.apiKey });
    assert.equal(exchangeOld.body.code, 'invalid_credentials');
    await expectCode(fresh.request({ method: 'GET', path: '/v1/members/x' }), 'member_not_found');
  });

  it(
    'a second rotation of a key still in its overlap (a retry whose answer was lost) gives a key with the ' +
      "original expiry, not the overlap's edge",
    async () => {
      const merchantId = await createMerchant(service);
      const never = await createKey(service, merchantId);
      const first = await admin(service, 'POST', `/admin/v1/api-keys/${never.keyId}/rotate`, { overlap_seconds: 60 });
      assert.equal(first.body.expires_at, null);
      const again = await admin(service, 'POST', `/admin/v1/api-keys/${never.keyId}/rotate`, { overlap_seconds: 60 });
      assert.equal(again.status, 201);
      assert.equal(again.body.expires_at, null, 'the key never expired: neither does its successor');
      // The old key keeps its first edge (a hard edge: a later rotation does not move it).
      const old = await service.ctx.db
        .selectFrom('api_keys')
        .select('expires_at')
        .where('id', '=', never.keyId)
        .executeTakeFirstOrThrow();
      assert.ok(old.expires_at && new Date(old.expires_at).getTime() <= Date.now() + 60_000);

      const until = new Date(Date.now() + 90 * 24 * 3600_000).toISOString();
      const dated = await createKey(service, merchantId, { expires_at: until });
      await admin(service, 'POST', `/admin/v1/api-keys/${dated.keyId}/rotate`, { overlap_seconds: 60 });
      const datedAgain = await admin(service, 'POST', `/admin/v1/api-keys/${dated.keyId}/rotate`, {
        overlap_seconds: 60,
      });
      assert.equal(datedAgain.body.expires_at, until, 'the expiry the operator gave the key');
    },
  );

  it('lets a suspended merchant read but not write; frozen and closed merchants can do neither', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'm1' });
    await admin(service, 'PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'suspended' });
    const read = await client.request<any>({ method: 'GET', path: '/v1/members/m1' });
    assert.equal(read.external_member_id, 'm1');
    await expectCode(client.members.create({ external_member_id: 'm2' }), 'merchant_disabled', 403);
    for (const status of ['frozen', 'closed']) {
      await admin(service, 'PATCH', `/admin/v1/merchants/${merchantId}`, { status });
      await expectCode(client.request({ method: 'GET', path: '/v1/members/m1' }), 'merchant_disabled', 403);
    }
  });

  it('keeps the environments apart: a sandbox member is invisible in production', async () => {
    const merchantId = await createMerchant(service);
    const sandbox = await keyClient(service, merchantId);
    const production = await keyClient(service, merchantId, { environment: 'production', scopes: ['members:write'] });
    await sandbox.members.create({ external_member_id: 'env-member' });
    await expectCode(production.request({ method: 'GET', path: '/v1/members/env-member' }), 'member_not_found');
    const prodMember = await production.members.create({ external_member_id: 'env-member' });
    assert.equal(
      (prodMember as any).external_member_id,
      'env-member',
      'same external id is free in the other environment',
    );
  });

  it('answers 401 on the operator API without the admin token', async () => {
    const res = await fetch(`${service.adminUrl}/admin/v1/merchants`, {
      method: 'POST',
      body: '{"name":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as any).code, 'invalid_token');
  });

  it('decides the operator token by the matched route: a percent-escaped /admin path still needs it', async () => {
    const count = async () =>
      Number(
        (
          await service.ctx.db
            .selectFrom('merchants')
            .select((e) => e.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    for (const path of ['/%61dmin/v1/merchants', '/%61%64%6d%69%6e/v1/merchants', '/admin%2Fv1/merchants']) {
      const res = await fetch(`${service.adminUrl}${path}`, {
        method: 'POST',
        body: '{"name":"escaped"}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 401, path);
      assert.equal(((await res.json()) as any).code, 'invalid_token', path);
    }
    assert.equal(await count(), before, 'no merchant was created');
    const unknown = await fetch(`${service.adminUrl}/nowhere`);
    assert.equal(unknown.status, 401, 'an unmatched path needs the token too');
    for (const open of ['/healthz', '/readyz', '/metrics'])
      assert.equal((await fetch(`${service.adminUrl}${open}`)).status, 200, open);
  });
});
