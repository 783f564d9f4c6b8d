import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { createMerchant, newMerchantClient, useTestService, keyClient } from './support/service.js';
import { fundedMember } from './support/fixtures.js';

describe('sandbox tools', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  const preset = (client: MerchantWalletClient, body: unknown, idempotencyKey: string | false = randomUUID()) =>
    client.requestRaw({ method: 'POST', path: '/v1/sandbox/upstream-behavior', body, idempotencyKey });
  const reset = (client: MerchantWalletClient, idempotencyKey: string | false = randomUUID()) =>
    client.requestRaw({ method: 'POST', path: '/v1/sandbox/reset', idempotencyKey });
  const behaviorsOf = (merchantId: string) =>
    service.ctx.db
      .selectFrom('upstream_behaviors')
      .select(['upstream', 'behavior'])
      .where('merchant_id', '=', merchantId)
      .orderBy('upstream')
      .execute();

  it('presets each upstream; the upstream is case-insensitive; success clears', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    for (const [upstream, behavior] of [
      ['remittance', 'reject'],
      ['Card', 'timeout'],
      ['QRPAY', 'unknown'],
      [' chain ', 'unknown_status'],
    ]) {
      const res = await preset(client, { upstream, behavior });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { ok: true, upstream: upstream!.trim().toLowerCase(), behavior, expires_in: 3600 });
    }
    assert.deepEqual(await behaviorsOf(merchantId), [
      { upstream: 'card', behavior: 'timeout' },
      { upstream: 'chain', behavior: 'unknown_status' },
      { upstream: 'qrpay', behavior: 'unknown' },
      { upstream: 'remittance', behavior: 'reject' },
    ]);
    const replaced = await preset(client, { upstream: 'card', behavior: 'reject' });
    assert.equal(replaced.body.behavior, 'reject');
    const cleared = await preset(client, { upstream: 'card', behavior: 'success' });
    assert.deepEqual(cleared.body, { ok: true, upstream: 'card', behavior: 'success', expires_in: 3600 });
    assert.deepEqual(
      (await behaviorsOf(merchantId)).map((b) => b.upstream),
      ['chain', 'qrpay', 'remittance'],
    );
  });

  it('checks both enumerations and the body: 400 invalid_request', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const bad: unknown[] = [
      { upstream: 'bank', behavior: 'reject' },
      { upstream: 'qrpay', behavior: 'explode' },
      { upstream: 'qrpay', behavior: 'REJECT' },
      { upstream: 'qrpay' },
      { behavior: 'reject' },
      { upstream: 7, behavior: 'reject' },
      { upstream: '', behavior: 'reject' },
      [],
    ];
    for (const body of bad) {
      const res = await preset(client, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'invalid_request', JSON.stringify(body));
      assert.equal(res.body.type, 'invalid_request_error');
    }
    const notJson = await client.requestRaw({
      method: 'POST',
      path: '/v1/sandbox/upstream-behavior',
      rawBody: '{"upstream": qrpay',
      idempotencyKey: randomUUID(),
    });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.code, 'invalid_request');
    assert.deepEqual(await behaviorsOf(merchantId), []);
  });

  it('needs an idempotency key, replays with it, and refuses a member context', async () => {
    const { client } = await newMerchantClient(service);
    assert.equal(
      (await preset(client, { upstream: 'qrpay', behavior: 'reject' }, false)).body.code,
      'idempotency_key_required',
    );
    assert.equal((await reset(client, false)).body.code, 'idempotency_key_required');
    const key = randomUUID();
    assert.equal((await preset(client, { upstream: 'qrpay', behavior: 'reject' }, key)).status, 200);
    const again = await preset(client, { upstream: 'qrpay', behavior: 'reject' }, key);
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.equal(
      (await preset(client, { upstream: 'qrpay', behavior: 'timeout' }, key)).body.code,
      'idempotency_key_reused',
    );
    await client.members.create({ external_member_id: 'mx' });
    const onBehalf = await client.requestRaw({
      method: 'POST',
      path: '/v1/sandbox/reset',
      onBehalfOf: 'mx',
      idempotencyKey: randomUUID(),
    });
    assert.equal(onBehalf.body.code, 'invalid_request');
  });

  it('needs merchant:read', async () => {
    const merchantId = await createMerchant(service);
    const client = await keyClient(service, merchantId, { scopes: ['members:write'] });
    assert.equal((await preset(client, { upstream: 'qrpay', behavior: 'reject' })).body.code, 'insufficient_scope');
    assert.equal((await reset(client)).body.code, 'insufficient_scope');
    const reader = await keyClient(service, merchantId, { scopes: ['merchant:read'] });
    assert.equal((await preset(reader, { upstream: 'qrpay', behavior: 'reject' })).status, 200);
  });

  it('answers 404 not_found on production', async () => {
    const merchantId = await createMerchant(service);
    const prod = await keyClient(service, merchantId, { environment: 'production', scopes: ['merchant:read'] });
    for (const res of [await preset(prod, { upstream: 'qrpay', behavior: 'reject' }), await reset(prod)]) {
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'not_found');
      assert.equal(res.body.type, 'not_found');
    }
    assert.deepEqual(await behaviorsOf(merchantId), []);
  });

  it(
    "reset clears this merchant's sandbox deliveries, logs and presets only; money, " + 'orders and members stay',
    async () => {
      const a = await newMerchantClient(service);
      const b = await newMerchantClient(service);
      const prodA = await keyClient(service, a.merchantId, { environment: 'production', scopes: ['merchant:read'] });
      for (const { client } of [a, b]) {
        await fundedMember(client, '5', 'USDT', { external: 'resetter' });
        await client.merchant.balances();
        await preset(client, { upstream: 'qrpay', behavior: 'reject' });
        await preset(client, { upstream: 'chain', behavior: 'timeout' });
      }
      await prodA.merchant.balances();
      // Webhook fan-out (when that module is present) turns the events into delivery records.
      await service.workers.tick();
      await service.workers.jobs.drain();
      await service.ctx.apiCallLog.flush();

      const hasDeliveries =
        (
          await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'webhook_deliveries'`.execute(
            service.ctx.db,
          )
        ).rows[0]!.n > 0;
      const deliveries = async (merchantId: string) =>
        hasDeliveries
          ? (
              await sql<{
                n: number;
              }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = ${merchantId} AND environment =
              'sandbox'`.execute(service.ctx.db)
            ).rows[0]!.n
          : 0;
      const logs = async (merchantId: string, environment: 'sandbox' | 'production') =>
        Number(
          (
            await service.ctx.db
              .selectFrom('api_call_logs')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('merchant_id', '=', merchantId)
              .where('environment', '=', environment)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const deliveriesA = await deliveries(a.merchantId);
      const deliveriesB = await deliveries(b.merchantId);
      const logsA = await logs(a.merchantId, 'sandbox');
      const logsB = await logs(b.merchantId, 'sandbox');
      const prodLogsA = await logs(a.merchantId, 'production');
      assert.ok(logsA >= 5 && logsB >= 5 && prodLogsA >= 1, `${logsA} ${logsB} ${prodLogsA}`);
      const balanceBefore = await a.client.balances.list({ onBehalfOf: 'resetter' });

      const key = randomUUID();
      const res = await reset(a.client, key);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.ok, true);
      assert.deepEqual(Object.keys(res.body.cleared).sort(), ['merchant_api_logs', 'merchant_webhook_deliveries']);
      assert.equal(res.body.cleared.merchant_webhook_deliveries, deliveriesA);
      assert.ok(res.body.cleared.merchant_api_logs >= logsA, `${res.body.cleared.merchant_api_logs} >= ${logsA}`);
      assert.match(res.body.note, /balances do not reset/);

      await service.ctx.apiCallLog.flush();
      const leftA = await service.ctx.db
        .selectFrom('api_call_logs')
        .select('path')
        .where('merchant_id', '=', a.merchantId)
        .where('environment', '=', 'sandbox')
        .execute();
      assert.ok(
        leftA.every((r) => r.path === '/v1/sandbox/reset'),
        'only the reset call itself is logged afterwards',
      );
      assert.equal(await deliveries(a.merchantId), 0);
      assert.deepEqual(await behaviorsOf(a.merchantId), []);
      // Other merchant and the production side untouched.
      assert.equal(await deliveries(b.merchantId), deliveriesB);
      assert.ok((await logs(b.merchantId, 'sandbox')) >= logsB);
      assert.equal((await behaviorsOf(b.merchantId)).length, 2);
      assert.ok((await logs(a.merchantId, 'production')) >= prodLogsA);
      // Money, members and orders stay.
      assert.deepEqual(await a.client.balances.list({ onBehalfOf: 'resetter' }), balanceBefore);
      assert.equal(((await a.client.members.get('resetter')) as any).external_member_id, 'resetter');

      const replay = await reset(a.client, key);
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      assert.deepEqual(replay.body, res.body);
      const second = await reset(a.client);
      assert.equal(second.body.cleared.merchant_webhook_deliveries, 0);
    },
  );
});
