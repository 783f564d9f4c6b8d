import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, createMerchant, newMerchantClient, startTestService } from './support/service.js';

/**
 * Input the route schemas let through that a handler then misread (the audit of extra keys, unbounded
 * strings and optional fields): each probe goes through the HTTP API.
 */
describe('input audit', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  before(async () => {
    service = await startTestService();
    ({ client } = await newMerchantClient(service));
  });
  after(async () => service.close());

  it('PATCH /v1/webhooks/endpoints/{id} with only keys it does not know is 400 invalid_request, as {} is; the endpoint is unchanged', async () => {
    const ep = await client.webhooks.createEndpoint({ url: 'http://127.0.0.1:9/hook', event_types: ['deposit.credited'] }) as any;
    const before = (await client.request<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data.find((e: any) => e.id === ep.id);
    // A misspelt field: the merchant means to pause the endpoint.
    const res = await client.request<any>({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: { Status: 'disabled' } }).then(
      (ok) => ({ ok }), (err) => ({ err }));
    assert.ok('err' in res, `answered ${JSON.stringify((res as any).ok)}`);
    assert.equal((res as any).err.code, 'invalid_request');
    assert.equal((res as any).err.status, 400);
    const after = (await client.request<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data.find((e: any) => e.id === ep.id);
    assert.deepEqual(after, before, 'nothing changed, not even updated_at');
    // A known field beside an unknown one still applies.
    const patched = await client.request<any>({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: { status: 'disabled', Status: 'enabled' } });
    assert.equal(patched.status, 'disabled');
  });
});
