import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, createMerchant, newMerchantClient, useTestService } from './support/service.js';

/**
 * Input the route schemas let through that a handler then misread (the audit of extra keys, unbounded
 * strings and optional fields): each probe goes through the HTTP API.
 */
describe('input audit', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({}, (s) => ({ service, client } = s));

  it(
    'PATCH /v1/webhooks/endpoints/{id} with only keys it does not know is 400 invalid_request, as {} is; the ' +
      'endpoint is unchanged',
    async () => {
      const ep = (await client.webhooks.createEndpoint({
        url: 'http://127.0.0.1:9/hook',
        event_types: ['deposit.credited'],
      })) as any;
      const before = (await client.request<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data.find(
        (e: any) => e.id === ep.id,
      );
      // A misspelt field: the merchant means to pause the endpoint.
      const res = await client
        .request<any>({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: { Status: 'disabled' } })
        .then(
          (ok) => ({ ok }),
          (err) => ({ err }),
        );
      assert.ok('err' in res, `answered ${JSON.stringify((res as any).ok)}`);
      assert.equal((res as any).err.code, 'invalid_request');
      assert.equal((res as any).err.status, 400);
      const after = (await client.request<any>({ method: 'GET', path: '/v1/webhooks/endpoints' })).data.find(
        (e: any) => e.id === ep.id,
      );
      assert.deepEqual(after, before, 'nothing changed, not even updated_at');
      // A known field beside an unknown one still applies.
      const patched = await client.request<any>({
        method: 'PATCH',
        path: `/v1/webhooks/endpoints/${ep.id}`,
        body: { status: 'disabled', Status: 'enabled' },
      });
      assert.equal(patched.status, 'disabled');
    },
  );

  it(
    'DELETE /admin/v1/merchants/{id}/card-bins/{bin} takes the BIN and id PUT takes: anything else is 400, not ' +
      'a 200 echoing it',
    async () => {
      const merchantId = await createMerchant(service);
      await admin(service, 'PUT', `/admin/v1/merchants/${merchantId}/card-bins/400000`, { environment: 'sandbox' });
      for (const [id, bin] of [
        [merchantId, 'not-a-bin'],
        [merchantId, '4'.repeat(200)],
        ['m'.repeat(200), '400000'],
      ]) {
        const res = await admin(service, 'DELETE', `/admin/v1/merchants/${id}/card-bins/${bin}?environment=sandbox`);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.code, 'invalid_request');
      }
      const ok = await admin(
        service,
        'DELETE',
        `/admin/v1/merchants/${merchantId}/card-bins/400000?environment=sandbox`,
      );
      assert.deepEqual([ok.status, ok.body], [200, { bin: '400000', authorized: false }]);
      const listed = await admin(service, 'GET', `/admin/v1/merchants/${merchantId}/card-bins?environment=sandbox`);
      assert.deepEqual(listed.body.data, []);
    },
  );

  it(
    'a KYC rejection reason of 500 characters ending in an emoji is stored as sent (it was cut inside the ' +
      'emoji and stored changed)',
    async () => {
      const other = await newMerchantClient(service);
      const reason = `${'a'.repeat(499)}\u{1F600}`;
      const rejectWith = async (memberRef: string, via: 'operator' | 'sandbox') => {
        const m = await other.client.members.create({ external_member_id: memberRef });
        await other.client.hostedScreens.sandboxComplete(
          (await other.client.kyc.createSession({ onBehalfOf: m.id })).id,
          'submitted',
        );
        const queue = (await admin(service, 'GET', '/admin/v1/kyc/profiles?environment=sandbox&limit=100')).body.data;
        const profile = queue.find((p: any) => p.member_id === m.id);
        if (via === 'operator') {
          const res = await admin(service, 'POST', `/admin/v1/kyc/profiles/${profile.id}/review`, {
            decision: 'rejected',
            reason,
          });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.rejection_reason, reason);
        } else {
          await other.client.request({
            method: 'POST',
            path: `/v1/sandbox/kyc/${m.id}/review`,
            body: { decision: 'rejected', reason },
          });
        }
        const read = await admin(service, 'GET', `/admin/v1/kyc/profiles/${profile.id}`);
        assert.equal(read.body.rejection_reason, reason, via);
      };
      await rejectWith('reason-op', 'operator');
      await rejectWith('reason-sbx', 'sandbox');
    },
  );
  it(
    'PATCH /admin/v1/cards/products/{id}: a source asset the catalogue does not have is 400 invalid_fields, ' +
      'and the list is unchanged',
    async () => {
      const products = (await admin(service, 'GET', '/admin/v1/cards/products?environment=sandbox')).body.data;
      const product = products[0];
      const res = await admin(service, 'PATCH', `/admin/v1/cards/products/${product.id}`, {
        source_assets: ['USDT', 'NOPE'],
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'invalid_fields');
      assert.deepEqual(res.body.fields, [{ key: 'source_assets[1]', reason: 'unknown_asset' }]);
      const after = (await admin(service, 'GET', '/admin/v1/cards/products?environment=sandbox')).body.data.find(
        (p: any) => p.id === product.id,
      );
      assert.deepEqual(after.source_assets, product.source_assets);
      // Known codes, in any letter case, are taken (upper case), as before.
      const ok = await admin(service, 'PATCH', `/admin/v1/cards/products/${product.id}`, {
        source_assets: product.source_assets.map((a: string) => a.toLowerCase()),
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual(ok.body.source_assets, product.source_assets);
    },
  );
});
