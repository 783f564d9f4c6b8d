import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { AuthCache, type TokenState } from '../src/platform/auth/auth-cache.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';

const state: TokenState = {
  tokenExpiresAt: Date.now() + 60_000,
  keyId: 'k',
  merchantId: 'm',
  environment: 'sandbox',
  signingKey: 's',
  scopes: [],
  ipAllowlist: '',
  disabled: false,
  keyExpiresAt: null,
  merchantStatus: 'active',
};

describe('authentication cache', () => {
  it('holds nothing while no notification connection listens', () => {
    const cache = new AuthCache();
    cache.put('t', state, cache.begin());
    assert.equal(cache.get('t'), undefined);
    cache.setListening(true);
    cache.put('t', state, cache.begin());
    assert.equal(cache.get('t'), state);
    cache.setListening(false);
    assert.equal(cache.get('t'), undefined, 'a lost connection forgets everything and reads per request');
  });

  it('never stores a read that began before an invalidation', () => {
    const cache = new AuthCache();
    cache.setListening(true);
    const generation = cache.begin();
    cache.invalidate();
    cache.put('t', state, generation);
    assert.equal(cache.get('t'), undefined);
    assert.equal(cache.size, 0);
  });
});

describe('authentication cache in the service', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it('answers repeated requests from memory and forgets a key the moment the operator disables it', async () => {
    const { client, creds } = await newMerchantClient(service);
    assert.equal(service.ctx.authCache.isListening, true);
    const before = service.ctx.authCache.size;
    assert.equal(
      (await client.requestRaw({ method: 'GET', path: '/v1/members/nobody' })).body.code,
      'member_not_found',
    );
    assert.equal(service.ctx.authCache.size, before + 1, 'the token is held after its first request');
    assert.equal(
      (await client.requestRaw({ method: 'GET', path: '/v1/members/nobody' })).body.code,
      'member_not_found',
    );
    assert.equal((await admin(service, 'PATCH', `/admin/v1/api-keys/${creds.keyId}`, { disabled: true })).status, 200);
    assert.equal(service.ctx.authCache.size, 0, 'the notification of the change emptied the cache');
    const refused = await client.requestRaw({ method: 'GET', path: '/v1/members/nobody' });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'invalid_token');
  });
});
