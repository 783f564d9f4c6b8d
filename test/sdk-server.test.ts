import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { MerchantWalletError } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { clientFor, createKey, createMerchant, type Credentials, useTestService } from './support/service.js';
import { payNow } from './support/emv.js';

/** The SDK's own behaviour against the real server (retries, waits, token renewal). */
describe('SDK against the real server', () => {
  let service: RunningService;
  useTestService(
    { tokenTtlSeconds: 3, config: { simulatorConfirmDelayMs: 0 }, merchant: false },
    (s) => ({ service } = s),
  );

  const callsOf = async (merchantId: string, method: string, pathPrefix: string) => {
    await service.ctx.apiCallLog.flush();
    const rows = await service.ctx.db
      .selectFrom('api_call_logs')
      .select(['path', 'status_code'])
      .where('merchant_id', '=', merchantId)
      .where('method', '=', method)
      .execute();
    return rows.filter((r) => r.path.startsWith(pathPrefix));
  };

  function sdk(creds: Credentials, sleeps: number[], onSleep?: () => Promise<void>) {
    return clientFor(service, creds, {
      maxAttempts: 4,
      sleep: async (ms) => {
        sleeps.push(ms);
        await onSleep?.();
      },
    });
  }

  it('does not retry a do-not-retry code', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['merchant:read'] });
    const sleeps: number[] = [];
    const client = sdk(creds, sleeps);
    await assert.rejects(
      client.members.create({ external_member_id: 'x' }),
      (e: MerchantWalletError) => e.code === 'insufficient_scope',
    );
    await assert.rejects(
      client.request({ method: 'GET', path: '/v1/withdrawals/wdr_nope' }),
      (e: MerchantWalletError) => e.code === 'insufficient_scope',
    );
    assert.deepEqual(sleeps, []);
    assert.equal((await callsOf(merchantId, 'POST', '/v1/members')).length, 1, 'one attempt reached the server');
  });

  it('waits Retry-After on a 429 and then succeeds with the same call', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['members:write'] });
    const subject = `${merchantId}:sandbox`;
    if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 200));
    const minute = Math.floor(Date.now() / 60_000);
    await sql`INSERT INTO rate_limit_windows (subject, bucket, window_start, hits) VALUES (${subject},
      'members_write', ${minute}, 300)`.execute(service.ctx.db);
    const sleeps: number[] = [];
    // While the client waits, the window frees up (as time would); the retry then passes.
    const client = sdk(creds, sleeps, async () => {
      await sql`DELETE FROM rate_limit_windows WHERE subject = ${subject}`.execute(service.ctx.db);
    });
    const member = (await client.members.create({ external_member_id: 'after-429' })) as any;
    assert.equal(member.external_member_id, 'after-429');
    assert.equal(sleeps.length, 1);
    assert.ok(sleeps[0]! >= 1000 && sleeps[0]! <= 60_000, `waited ${sleeps[0]} ms, the Retry-After`);
    const posts = await callsOf(merchantId, 'POST', '/v1/members');
    assert.deepEqual(posts.map((p) => p.status_code).sort(), [201, 429]);
  });

  it('renews the token after it expires', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['members:write'] });
    const client = sdk(creds, []);
    const first = await client.getToken();
    await client.members.create({ external_member_id: 'tok' });
    await new Promise((r) => setTimeout(r, 3200));
    const member = (await client.members.get('tok')) as any;
    assert.equal(member.external_member_id, 'tok');
    assert.notEqual(await client.getToken(), first, 'a new token was exchanged');
  });

  it('renews the token when the server answers invalid_token', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, { scopes: ['members:write'] });
    const client = sdk(creds, []);
    const first = await client.getToken();
    await service.ctx.db.deleteFrom('access_tokens').execute();
    const member = (await client.members.create({ external_member_id: 'revived' })) as any;
    assert.equal(member.status, 'active');
    assert.notEqual(await client.getToken(), first);
  });

  it('retries an upstream_timeout with the same idempotency key, which resumes the same order', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId);
    const sleeps: number[] = [];
    const client = sdk(creds, sleeps);
    const member = (await client.members.create({ external_member_id: 'payer' })) as any;
    await client.deposits.create({ member_id: 'payer', asset: 'SGD', amount: '50', tx_hash: 'bank-1' });
    await client.request({
      method: 'POST',
      path: '/v1/sandbox/upstream-behavior',
      body: { upstream: 'qrpay', behavior: 'timeout' },
    });
    const order = await client.request<any>({
      method: 'POST',
      path: '/v1/qrpay/payments',
      body: { qr_code: payNow({ amount: '20' }), asset: 'SGD' },
      onBehalfOf: 'payer',
    });
    assert.equal(order.status, 'completed');
    assert.equal(sleeps.length, 1, 'one retry after the 504');
    const posts = await callsOf(merchantId, 'POST', '/v1/qrpay/payments');
    assert.deepEqual(
      posts.map((p) => p.status_code),
      [504, 201],
    );
    const orders = await service.ctx.db
      .selectFrom('qrpay_orders')
      .select('id')
      .where('member_id', '=', member.id)
      .execute();
    assert.deepEqual(
      orders.map((o) => o.id),
      [order.id],
      'a new key would have made a second order',
    );
    const sgd = ((await client.balances.list({ onBehalfOf: 'payer' })) as any[]).find((b) => b.asset === 'SGD');
    assert.equal(sgd.available, '30.00');
    assert.equal(sgd.frozen, '0.00');
  });
});
