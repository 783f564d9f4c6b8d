import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { verifyLedger } from '../src/money/index.js';
import { SimulatedQrPay } from '../src/upstreams/qrpay/simulator.js';
import { admin, newMerchantClient, useTestService, instantUpstreams } from './support/service.js';
import { emv, payNow } from './support/emv.js';
import { expectCode } from './support/expect.js';
import type {
  DecodedQr as SdkDecodedQr,
  QrPayment as SdkQrPayment,
  QrScheme as SdkQrScheme,
} from '@merchant-wallet/sdk';
import type { Static } from 'typebox';
import type { DecodedQr, QrPayment, QrScheme } from '../src/modules/qrpay/routes.js';
import { balanceOf, entryKinds, fundedMember, eventsAbout } from './support/fixtures.js';

/*
 * The SDK declares its QR pay types itself (a client package does not import the server); the type
 * checker holds them to the route schemas both ways: what the server sends is assignable to the
 * SDK's type, and the SDK's type to the server's (no field named that the server does not send).
 */
type Holds<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type SdkQrTypesMatchServer = [
  Holds<Same<Static<typeof QrScheme>, SdkQrScheme>>,
  Holds<Same<Static<typeof DecodedQr>, SdkDecodedQr>>,
  Holds<Same<Static<typeof QrPayment>, SdkQrPayment>>,
];

const duitNow = emv([
  ['00', '01'],
  ['01', '11'],
  [
    '26',
    [
      ['00', 'COM.DUITNOW'],
      ['01', '890053'],
    ],
  ],
  ['52', '5411'],
  ['53', '458'],
  ['58', 'MY'],
  ['59', 'KEDAI RUNCIT'],
  ['60', 'KUALA LUMPUR'],
]);
const visaOnly = emv([
  ['00', '01'],
  ['01', '11'],
  ['02', '4000123456789012'],
  ['52', '5411'],
  ['53', '702'],
  ['58', 'SG'],
  ['59', 'CARD ONLY SHOP'],
  ['60', 'SINGAPORE'],
]);

describe('QR payments', () => {
  let service: RunningService;
  useTestService(
    {
      config: instantUpstreams,
      merchant: false,
    },
    (s) => ({ service } = s),
  );

  /** A new member holding `amount` SGD, deposited by bank transfer. */
  const sgdMember = (client: MerchantWalletClient, amount = '100.00') =>
    fundedMember(client, amount, 'SGD', { prefix: 'q', txHashPrefix: 'bank-' });
  const sgd = (client: MerchantWalletClient, member: string) => balanceOf(client, member, 'SGD');
  const pay = (
    client: MerchantWalletClient,
    member: string,
    body: Record<string, unknown>,
    idempotencyKey: string = randomUUID(),
  ) => client.requestRaw({ method: 'POST', path: '/v1/qrpay/payments', body, onBehalfOf: member, idempotencyKey });
  const inject = (client: MerchantWalletClient, upstream: string, behavior: string) =>
    client.request({ method: 'POST', path: '/v1/sandbox/upstream-behavior', body: { upstream, behavior } });
  /** A new merchant's client and a member of it holding 100 SGD; the provider then answers `behavior`, when given. */
  async function sgdMerchantMember(behavior?: string) {
    const { client, merchantId } = await newMerchantClient(service);
    const m = await sgdMember(client);
    if (behavior) await inject(client, 'qrpay', behavior);
    return { client, merchantId, m };
  }
  /**
   * A member's payment of `amount` SGD sent while the provider answers `behavior`, answered `status` and `code`: the
   * merchant's client, the member and the order left open.
   */
  async function openPayment(behavior: string, amount: string, status: number, code: string) {
    const { client, m } = await sgdMerchantMember(behavior);
    const res = await pay(client, m.external, { qr_code: payNow({ amount }), asset: 'SGD' });
    assert.equal(res.status, status);
    assert.equal(res.body.code, code);
    const [order] = await ordersOf(m);
    return { client, m, order };
  }
  /** The member's QR payment orders. */
  const ordersOf = (m: { id: string }) =>
    service.ctx.db.selectFrom('qrpay_orders').selectAll().where('member_id', '=', m.id).execute();
  const entriesOf = (orderId: string) => entryKinds(service, orderId);
  const eventsOf = async (orderId: string) =>
    (await eventsAbout(service, orderId, ['type', 'status', 'status_version', 'object'])).map(
      (e) => `${e.type}@${e.status_version}`,
    );
  const reconcile = async () => {
    await service.workers.jobs.drain();
    await service.workers.tick();
  };

  it('lists the schemes; only those whose currency is an enabled asset are payable', async () => {
    const { client } = await newMerchantClient(service);
    const res = (await client.request({ method: 'GET', path: '/v1/qrpay/schemes' })) as any;
    assert.equal(res.has_more, false);
    assert.equal(res.next_cursor, null);
    const byId = new Map(res.data.map((s: any) => [s.id, s]));
    assert.deepEqual(byId.get('sg_paynow'), {
      id: 'sg_paynow',
      name: 'PayNow',
      country: 'SG',
      currency: 'SGD',
      payable: true,
    });
    assert.equal((byId.get('hk_fps') as any).payable, true);
    assert.equal((byId.get('my_duitnow') as any).payable, false);
    const viaSdk = await client.qrpay.schemes();
    assert.deepEqual(viaSdk, res.data);
    const op = await admin(service, 'GET', '/admin/v1/qrpay/schemes');
    assert.ok(op.body.data.find((s: any) => s.id === 'sg_paynow').guids.includes('SG.PAYNOW'));
  });

  it(
    'decodes a QR for a member; refuses bad checksums, unsupported schemes, ' + 'non-EMV text and refused merchants',
    async () => {
      const { client, m } = await sgdMerchantMember();
      const decode = (qr_code: string) =>
        client.request<any>({ method: 'POST', path: '/v1/qrpay/decode', body: { qr_code }, onBehalfOf: m.external });
      const d = await decode(payNow({ amount: '12.5' }));
      assert.deepEqual(d, {
        scheme: 'sg_paynow',
        scheme_name: 'PayNow',
        payable: true,
        merchant_name: 'KOPI CORNER',
        merchant_city: 'Singapore',
        country: 'SG',
        currency: 'SGD',
        amount: '12.50',
        merchant_category_code: '5812',
        point_of_initiation: 'dynamic',
        reference: 'ORDER42',
      });
      assert.equal((await decode(payNow())).amount, null);
      assert.equal((await decode(duitNow)).payable, false);
      const good = payNow();
      await expectCode(decode(good.slice(0, -4) + (good.endsWith('0000') ? '0001' : '0000')), 'qr_code_invalid', 400);
      await expectCode(decode(good.slice(0, 30)), 'qr_code_invalid', 400);
      await expectCode(decode('hello, not a QR'), 'qr_code_invalid', 400);
      await expectCode(decode(visaOnly), 'qr_code_invalid', 400);
      await expectCode(decode(payNow({ uen: 'SIM-REFUSE-1' })), 'qr_code_invalid', 400);
      // A zero amount in the QR itself is an invalid QR (a QR asks for a positive amount or none).
      await expectCode(decode(payNow({ amount: '0' })), 'qr_code_invalid', 400);
      await expectCode(decode(payNow({ amount: '0.00' })), 'qr_code_invalid', 400);
      await expectCode(
        client.request({ method: 'POST', path: '/v1/qrpay/decode', body: { qr_code: good } }),
        'member_context_required',
        400,
      );
      // Read-only: an injected refusal of the money-moving step does not touch decoding.
      await inject(client, 'qrpay', 'reject');
      assert.equal((await decode(good)).scheme, 'sg_paynow');
    },
  );

  it('pays a QR: freezes, then completes; the debit leaves available once; member sees own only', async () => {
    const { client, m } = await sgdMerchantMember();
    const key = randomUUID();
    const res = await pay(client, m.external, { qr_code: payNow(), amount: '12.5', asset: 'sgd', note: 'coffee' }, key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const order = res.body;
    assert.match(order.id, /^qrp_[0-9a-f-]{36}$/);
    assert.equal(order.status, 'completed');
    assert.equal(order.status_version, 2);
    assert.equal(order.amount, '12.50');
    assert.equal(order.asset, 'SGD');
    assert.equal(order.scheme, 'sg_paynow');
    assert.equal(order.merchant_name, 'KOPI CORNER');
    assert.equal(order.note, 'coffee');
    assert.equal(order.failure_reason, null);
    assert.equal(order.member_id, m.id);
    const bal = await sgd(client, m.external);
    assert.equal(bal.available, '87.50');
    assert.equal(bal.frozen, '0.00');
    assert.equal(bal.total, '87.50');
    assert.deepEqual(await entriesOf(order.id), ['qrpay.complete', 'qrpay.freeze']);
    assert.deepEqual(await eventsOf(order.id), ['qrpay.order.completed@2']);

    const replay = await pay(
      client,
      m.external,
      { qr_code: payNow(), amount: '12.5', asset: 'sgd', note: 'coffee' },
      key,
    );
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.body.id, order.id);
    assert.equal((await sgd(client, m.external)).available, '87.50');

    assert.equal(
      ((await client.request({ method: 'GET', path: `/v1/qrpay/payments/${order.id}`, onBehalfOf: m.external })) as any)
        .status,
      'completed',
    );
    assert.equal(
      ((await client.request({ method: 'GET', path: `/v1/qrpay/payments/${order.id.replace(/^qrp_/, '')}` })) as any)
        .id,
      order.id,
    );
    const other = await sgdMember(client);
    await expectCode(
      client.request({ method: 'GET', path: `/v1/qrpay/payments/${order.id}`, onBehalfOf: other.external }),
      'not_found',
      404,
    );
    const mine = (await client.request({ method: 'GET', path: '/v1/qrpay/payments', onBehalfOf: m.external })) as any;
    assert.deepEqual(
      mine.data.map((o: any) => o.id),
      [order.id],
    );
    const theirs = (await client.request({
      method: 'GET',
      path: '/v1/qrpay/payments',
      onBehalfOf: other.external,
    })) as any;
    assert.deepEqual(theirs.data, []);
  });

  it("the SDK's helpers: schemes, decode, pay (replayed by its key), get, list", async () => {
    const { client, m } = await sgdMerchantMember();
    assert.equal(
      (await client.qrpay.schemes({ onBehalfOf: m.external })).find((s) => s.id === 'sg_paynow')?.payable,
      true,
    );
    const decoded = await client.qrpay.decode(payNow({ amount: '3' }), { onBehalfOf: m.external });
    assert.deepEqual([decoded.scheme, decoded.amount, decoded.currency], ['sg_paynow', '3.00', 'SGD']);
    await expectCode(client.qrpay.decode('not a qr', { onBehalfOf: m.external }), 'qr_code_invalid');
    const key = randomUUID();
    const paid = await client.qrpay.pay(
      { qr_code: payNow({ amount: '3' }), asset: 'SGD', note: 'tea' },
      { onBehalfOf: m.external, idempotencyKey: key },
    );
    assert.deepEqual([paid.status, paid.amount, paid.note], ['completed', '3.00', 'tea']);
    assert.equal(
      (
        await client.qrpay.pay(
          { qr_code: payNow({ amount: '3' }), asset: 'SGD', note: 'tea' },
          { onBehalfOf: m.external, idempotencyKey: key },
        )
      ).id,
      paid.id,
    );
    assert.deepEqual(await client.qrpay.get(paid.id, { onBehalfOf: m.external }), paid);
    assert.deepEqual(await client.qrpay.get(paid.id.slice(4)), paid);
    const listed = [];
    for await (const o of client.qrpay.list({ onBehalfOf: m.external, status: 'completed', limit: 1 })) listed.push(o);
    assert.deepEqual(listed, [paid]);
    const other = await sgdMember(client);
    await expectCode(client.qrpay.get(paid.id, { onBehalfOf: other.external }), 'not_found', 404);
    assert.equal((await sgd(client, m.external)).available, '97.00');
  });

  it('pages the list and filters by status', async () => {
    const { client, m } = await sgdMerchantMember();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await pay(client, m.external, { qr_code: payNow({ amount: `1.0${i}` }), asset: 'SGD' })).body.id);
    const page1 = (await client.request({
      method: 'GET',
      path: '/v1/qrpay/payments',
      query: { limit: 2 },
      onBehalfOf: m.external,
    })) as any;
    assert.equal(page1.has_more, true);
    const page2 = (await client.request({
      method: 'GET',
      path: '/v1/qrpay/payments',
      query: { limit: 2, cursor: page1.next_cursor },
      onBehalfOf: m.external,
    })) as any;
    assert.equal(page2.has_more, false);
    assert.deepEqual(
      [...page1.data, ...page2.data].map((o: any) => o.id),
      [...ids].reverse(),
    );
    const failed = (await client.request({
      method: 'GET',
      path: '/v1/qrpay/payments',
      query: { status: 'failed' },
    })) as any;
    assert.deepEqual(failed.data, []);
    assert.equal((await sgd(client, m.external)).available, '96.97');
  });

  it('validates amount, asset, scheme and balance before freezing anything', async () => {
    const { client } = await newMerchantClient(service);
    const m = await sgdMember(client, '10.00');
    const code = async (body: Record<string, unknown>) => (await pay(client, m.external, body)).body.code;
    assert.equal(await code({ qr_code: payNow({ amount: '5.00' }), amount: '4.99', asset: 'SGD' }), 'invalid_request');
    assert.equal(await code({ qr_code: payNow(), asset: 'SGD' }), 'invalid_request', 'no amount anywhere');
    assert.equal(await code({ qr_code: payNow(), amount: '0', asset: 'SGD' }), 'invalid_request');
    assert.equal(
      await code({ qr_code: payNow({ amount: '0' }), asset: 'SGD' }),
      'qr_code_invalid',
      'zero amount in the QR',
    );
    assert.equal(await code({ qr_code: payNow({ amount: '0.00' }), amount: '0.00', asset: 'SGD' }), 'qr_code_invalid');
    assert.equal(await code({ qr_code: payNow({ amount: '000' }), amount: '1', asset: 'SGD' }), 'qr_code_invalid');
    assert.equal(await code({ qr_code: payNow(), amount: '1.001', asset: 'SGD' }), 'invalid_request');
    assert.equal(await code({ qr_code: payNow(), amount: '1', asset: 'USDT' }), 'asset_not_allowed');
    assert.equal(await code({ qr_code: duitNow, amount: '1', asset: 'MYR' }), 'qr_code_invalid');
    assert.equal(await code({ qr_code: visaOnly, amount: '1', asset: 'SGD' }), 'qr_code_invalid');
    assert.equal(await code({ qr_code: 'not a qr', amount: '1', asset: 'SGD' }), 'qr_code_invalid');
    const short = await pay(client, m.external, { qr_code: payNow(), amount: '10.01', asset: 'SGD' });
    assert.equal(short.status, 400);
    assert.equal(short.body.code, 'insufficient_balance');
    const orders = await ordersOf(m);
    assert.deepEqual(orders, [], 'no order is left behind by a refusal');
    const bal = await sgd(client, m.external);
    assert.equal(bal.available, '10.00');
    assert.equal(bal.frozen, '0.00');
    const exact = await pay(client, m.external, { qr_code: payNow({ amount: '10' }), amount: '10.00', asset: 'SGD' });
    assert.equal(exact.body.status, 'completed');
  });

  it('confirms asynchronously: processing with the funds frozen, completed by reconciliation', async () => {
    const { client, m } = await sgdMerchantMember();
    const original = service.ctx.upstreams.qrpay;
    service.ctx.upstreams.qrpay = new SimulatedQrPay(service.ctx.db, { confirmDelayMs: 3_600_000 });
    try {
      const res = await pay(client, m.external, { qr_code: payNow({ amount: '20' }), asset: 'SGD' });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 'processing');
      assert.equal(res.body.status_version, 1);
      const id = res.body.id;
      let bal = await sgd(client, m.external);
      assert.equal(bal.available, '80.00');
      assert.equal(bal.frozen, '20.00');
      await reconcile();
      assert.equal(
        ((await client.request({ method: 'GET', path: `/v1/qrpay/payments/${id}` })) as any).status,
        'processing',
        'the provider is still processing',
      );
      // The provider's confirmation time passes.
      await service.ctx.db
        .updateTable('upstream_sim_orders')
        .set({ settle_at: new Date(Date.now() - 1000) })
        .where('request_id', '=', id)
        .execute();
      await reconcile();
      const done = (await client.request({ method: 'GET', path: `/v1/qrpay/payments/${id}` })) as any;
      assert.equal(done.status, 'completed');
      assert.equal(done.status_version, 2);
      bal = await sgd(client, m.external);
      assert.equal(bal.frozen, '0.00');
      assert.equal(bal.available, '80.00');
      await reconcile();
      assert.deepEqual(await entriesOf(id), ['qrpay.complete', 'qrpay.freeze']);
      assert.deepEqual(await eventsOf(id), ['qrpay.order.completed@2']);
    } finally {
      service.ctx.upstreams.qrpay = original;
    }
  });

  it('reject: the order fails and the freeze is released in full', async () => {
    const { client, m } = await sgdMerchantMember();
    const set = (await inject(client, 'QRPAY', 'reject')) as any;
    assert.deepEqual(set, { ok: true, upstream: 'qrpay', behavior: 'reject', expires_in: 3600 });
    const res = await pay(client, m.external, { qr_code: payNow({ amount: '30' }), asset: 'SGD' });
    assert.equal(res.status, 201);
    assert.equal(res.body.status, 'failed');
    assert.equal(res.body.status_version, 2);
    assert.equal(res.body.failure_reason, 'upstream_rejected');
    const bal = await sgd(client, m.external);
    assert.equal(bal.available, '100.00');
    assert.equal(bal.frozen, '0.00');
    assert.deepEqual(await entriesOf(res.body.id), ['qrpay.fail', 'qrpay.freeze']);
    assert.deepEqual(await eventsOf(res.body.id), ['qrpay.order.failed@2']);
    await reconcile();
    assert.deepEqual(await entriesOf(res.body.id), ['qrpay.fail', 'qrpay.freeze'], 'nothing more');

    // A merchant the network refuses on its own (no injection) fails the same way.
    await inject(client, 'qrpay', 'success');
    const refused = await pay(client, m.external, {
      qr_code: payNow({ amount: '5', uen: 'SIM-REFUSE-9' }),
      asset: 'SGD',
    });
    assert.equal(refused.body.status, 'failed');
    assert.equal((await sgd(client, m.external)).available, '100.00');
  });

  it(
    'timeout: 504, funds stay frozen until reconciliation finds the payment completed; ' + 'no double posting',
    async () => {
      const { client, m, order } = await openPayment('timeout', '40', 504, 'upstream_timeout');
      assert.ok(order);
      assert.equal(order.status, 'processing');
      assert.equal(order.upstream_outcome, 'timeout');
      let bal = await sgd(client, m.external);
      assert.equal(bal.available, '60.00');
      assert.equal(bal.frozen, '40.00', 'never released on an unknown outcome');
      assert.deepEqual(await entriesOf(order.id), ['qrpay.freeze']);

      await reconcile();
      const after1 = (await client.request({
        method: 'GET',
        path: `/v1/qrpay/payments/${order.id}`,
        onBehalfOf: m.external,
      })) as any;
      assert.equal(after1.status, 'completed', 'the provider did process it');
      bal = await sgd(client, m.external);
      assert.equal(bal.frozen, '0.00');
      assert.equal(bal.available, '60.00');
      await reconcile();
      await reconcile();
      assert.deepEqual(await entriesOf(order.id), ['qrpay.complete', 'qrpay.freeze']);
      assert.deepEqual(await eventsOf(order.id), ['qrpay.order.completed@2']);
      assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
    },
  );

  it(
    'unknown: 502, funds stay frozen; reconciliation finds nothing at the provider, fails the order and ' +
      'returns the funds',
    async () => {
      const { client, m, order } = await openPayment('unknown', '25', 502, 'upstream_error');
      assert.equal(order!.upstream_outcome, 'unknown');
      assert.equal((await sgd(client, m.external)).frozen, '25.00');
      await reconcile();
      const after1 = (await client.request({ method: 'GET', path: `/v1/qrpay/payments/${order!.id}` })) as any;
      assert.equal(after1.status, 'failed');
      assert.equal(after1.failure_reason, 'upstream_not_found');
      const bal = await sgd(client, m.external);
      assert.equal(bal.available, '100.00');
      assert.equal(bal.frozen, '0.00');
      await reconcile();
      assert.deepEqual(await entriesOf(order!.id), ['qrpay.fail', 'qrpay.freeze']);
      assert.deepEqual(await eventsOf(order!.id), ['qrpay.order.failed@2']);
    },
  );

  it('a provider that does not answer in time is a timeout: 504 and the funds stay frozen', async () => {
    const { client, m } = await sgdMerchantMember();
    const original = service.ctx.upstreams.qrpay;
    const saved = service.ctx.config.upstreamCallTimeoutMs;
    service.ctx.upstreams.qrpay = Object.assign(Object.create(original), { pay: () => new Promise(() => {}) });
    service.ctx.config.upstreamCallTimeoutMs = 200;
    try {
      const res = await pay(client, m.external, { qr_code: payNow({ amount: '3' }), asset: 'SGD' });
      assert.equal(res.status, 504);
      assert.equal(res.body.code, 'upstream_timeout');
      assert.equal((await sgd(client, m.external)).frozen, '3.00');
    } finally {
      service.ctx.upstreams.qrpay = original;
      service.ctx.config.upstreamCallTimeoutMs = saved;
    }
    // The request never reached the provider: reconciliation finds nothing and returns the funds.
    await reconcile();
    const bal = await sgd(client, m.external);
    assert.equal(bal.frozen, '0.00');
    assert.equal(bal.available, '100.00');
  });

  it('a not-found answer within the grace period changes nothing', async () => {
    const { client, m } = await sgdMerchantMember('unknown');
    const saved = service.ctx.config.upstreamNotFoundGraceMs;
    service.ctx.config.upstreamNotFoundGraceMs = 3_600_000;
    try {
      assert.equal((await pay(client, m.external, { qr_code: payNow({ amount: '5' }), asset: 'SGD' })).status, 502);
      await reconcile();
      const [order] = await ordersOf(m);
      assert.equal(order!.status, 'processing');
      assert.ok(order!.check_count >= 1);
      assert.equal((await sgd(client, m.external)).frozen, '5.00');
      // Still unresolved after many re-queries: one alert for the operator.
      await service.ctx.db.updateTable('qrpay_orders').set({ check_count: 19 }).where('id', '=', order!.id).execute();
      await reconcile();
      await reconcile();
      const stalled = await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.reconciliation_stalled');
      assert.deepEqual(stalled.body.data.filter((a: any) => a.object_id === order!.id).length, 1);
    } finally {
      service.ctx.config.upstreamNotFoundGraceMs = saved;
    }
    await reconcile();
    assert.equal((await sgd(client, m.external)).frozen, '0.00');
  });

  it(
    'unknown_status: the order is suspended (shown as processing), funds stay frozen, ' + 'an alert is raised once',
    async () => {
      const { client, merchantId, m } = await sgdMerchantMember('unknown_status');
      const res = await pay(client, m.external, { qr_code: payNow({ amount: '15' }), asset: 'SGD' });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 'processing', 'not exposed as a failure');
      assert.equal(res.body.status_version, 1);
      const id = res.body.id;
      const op = await admin(service, 'GET', `/admin/v1/qrpay/payments/${id}`);
      assert.equal(op.body.internal_status, 'suspended');
      assert.equal(op.body.provider_status, 'SANDBOX_UNKNOWN_STATUS');
      const alerts = await admin(
        service,
        'GET',
        `/admin/v1/alerts?kind=upstream.unknown_status&merchant_id=${merchantId}`,
      );
      assert.equal(alerts.status, 200);
      assert.equal(alerts.body.data.length, 1);
      assert.equal(alerts.body.data[0].object, 'qrpay_order');
      assert.equal(alerts.body.data[0].object_id, id);
      assert.equal((await sgd(client, m.external)).frozen, '15.00');

      await reconcile();
      await reconcile();
      const again = await admin(
        service,
        'GET',
        `/admin/v1/alerts?kind=upstream.unknown_status&merchant_id=${merchantId}`,
      );
      assert.equal(again.body.data.length, 1, 'raised once');
      assert.equal((await admin(service, 'GET', `/admin/v1/qrpay/payments/${id}`)).body.internal_status, 'suspended');
      assert.deepEqual(await entriesOf(id), ['qrpay.freeze']);
      const view = await admin(service, 'GET', `/admin/v1/upstreams/reconciliation?merchant_id=${merchantId}`);
      assert.deepEqual(
        view.body.data.map((o: any) => [o.id, o.internal_status]),
        [[id, 'suspended']],
      );

      // The operator checks with the provider and settles it.
      const resolved = await admin(service, 'POST', `/admin/v1/qrpay/payments/${id}/resolve`, { status: 'completed' });
      assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
      assert.equal(resolved.body.status, 'completed');
      assert.equal(resolved.body.status_version, 2);
      assert.equal((await sgd(client, m.external)).frozen, '0.00');
      assert.deepEqual(await entriesOf(id), ['qrpay.complete', 'qrpay.freeze']);
      assert.equal(
        (await admin(service, 'POST', `/admin/v1/qrpay/payments/${id}/resolve`, { status: 'failed' })).body.code,
        'state_invalid',
      );
    },
  );

  it(
    'an operator resolve asks the provider first: its outcome wins, a payment it reports in progress is ' +
      "refused, one it cannot tell about is the operator's",
    async () => {
      // The provider took the payment; its answer was lost. The operator would fail it.
      const { client, m, order } = await openPayment('timeout', '40', 504, 'upstream_timeout');
      const refused = await admin(service, 'POST', `/admin/v1/qrpay/payments/${order!.id}/resolve`, {
        status: 'failed',
      });
      assert.deepEqual([refused.status, refused.body.code], [400, 'state_invalid'], JSON.stringify(refused.body));
      assert.match(refused.body.message, /provider reports the payment succeeded: it is now completed/);
      assert.deepEqual(await entriesOf(order!.id), ['qrpay.complete', 'qrpay.freeze'], 'paid, not refunded');
      assert.deepEqual(
        [(await sgd(client, m.external)).available, (await sgd(client, m.external)).frozen],
        ['60.00', '0.00'],
      );
      await inject(client, 'qrpay', 'unknown_status');
      const original = service.ctx.upstreams.qrpay;
      try {
        // Suspended on a status outside the provider's list; the provider now says it is still processing.
        const open = await pay(client, m.external, { qr_code: payNow({ amount: '15' }), asset: 'SGD' });
        assert.equal(
          (await admin(service, 'GET', `/admin/v1/qrpay/payments/${open.body.id}`)).body.internal_status,
          'suspended',
        );
        service.ctx.upstreams.qrpay = Object.assign(Object.create(original), {
          status: async () => ({ kind: 'found', providerOrderId: 'QP-1', status: 'processing' }),
        });
        const inProgress = await admin(service, 'POST', `/admin/v1/qrpay/payments/${open.body.id}/resolve`, {
          status: 'failed',
        });
        assert.deepEqual([inProgress.status, inProgress.body.code], [400, 'state_invalid']);
        assert.match(inProgress.body.message, /in progress \(processing\)/);
        assert.equal(
          (await admin(service, 'GET', `/admin/v1/qrpay/payments/${open.body.id}`)).body.internal_status,
          'suspended',
        );
        assert.equal((await sgd(client, m.external)).frozen, '15.00');
        // The provider cannot answer: the operator's decision is applied.
        service.ctx.upstreams.qrpay = Object.assign(Object.create(original), {
          status: async () => ({ kind: 'timeout' }),
        });
        const failed = await admin(service, 'POST', `/admin/v1/qrpay/payments/${open.body.id}/resolve`, {
          status: 'failed',
        });
        assert.deepEqual(
          [failed.status, failed.body.status, failed.body.failure_reason],
          [200, 'failed', 'operator'],
          JSON.stringify(failed.body),
        );
        assert.deepEqual(
          [(await sgd(client, m.external)).available, (await sgd(client, m.external)).frozen],
          ['60.00', '0.00'],
        );
      } finally {
        service.ctx.upstreams.qrpay = original;
        await inject(client, 'qrpay', 'success');
      }
    },
  );

  it('an injection affects only its merchant, and reverts after 3600 seconds', async () => {
    const a = await newMerchantClient(service);
    const b = await newMerchantClient(service);
    const ma = await sgdMember(a.client);
    const mb = await sgdMember(b.client);
    await inject(a.client, 'qrpay', 'reject');
    assert.equal(
      (await pay(a.client, ma.external, { qr_code: payNow({ amount: '1' }), asset: 'SGD' })).body.status,
      'failed',
    );
    assert.equal(
      (await pay(b.client, mb.external, { qr_code: payNow({ amount: '1' }), asset: 'SGD' })).body.status,
      'completed',
    );
    const row = await service.ctx.db
      .selectFrom('upstream_behaviors')
      .selectAll()
      .where('merchant_id', '=', a.merchantId)
      .executeTakeFirstOrThrow();
    const ttl = (new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()) / 1000;
    assert.ok(Math.abs(ttl - 3600) < 2, `expires after ${ttl} s`);
    // An hour passes on a's sandbox clock.
    await a.client.sandbox.advanceClock(3600);
    assert.equal(
      (await pay(a.client, ma.external, { qr_code: payNow({ amount: '1' }), asset: 'SGD' })).body.status,
      'completed',
    );
    await service.workers.tick();
    const left = await service.ctx.db
      .selectFrom('upstream_behaviors')
      .select('merchant_id')
      .where('merchant_id', '=', a.merchantId)
      .execute();
    assert.deepEqual(left, [], 'expired presets are purged');
  });

  it('a retry with the same key after a 504 resumes the same order: no second order, no second freeze', async () => {
    const { client, m } = await sgdMerchantMember('timeout');
    const key = randomUUID();
    const body = { qr_code: payNow({ amount: '10' }), asset: 'SGD' };
    const first = await pay(client, m.external, body, key);
    assert.equal(first.status, 504);
    const other = await pay(client, m.external, { ...body, note: 'changed' }, key);
    assert.equal(other.status, 409);
    assert.equal(other.body.code, 'idempotency_key_reused');
    // The injection is still in force: the status query (read-only) finds the payment anyway.
    const retry = await pay(client, m.external, body, key);
    assert.equal(retry.status, 201, JSON.stringify(retry.body));
    assert.equal(retry.body.status, 'completed');
    assert.equal(retry.headers['x-idempotent-replay'], undefined);
    const orders = await ordersOf(m);
    assert.deepEqual(
      orders.map((o) => o.id),
      [retry.body.id],
    );
    assert.deepEqual(await entriesOf(retry.body.id), ['qrpay.complete', 'qrpay.freeze']);
    const third = await pay(client, m.external, body, key);
    assert.equal(third.headers['x-idempotent-replay'], 'true');
    assert.equal(third.body.id, retry.body.id);
    const bal = await sgd(client, m.external);
    assert.equal(bal.available, '90.00');
    assert.equal(bal.frozen, '0.00');

    // After a 502 the retry finds nothing at the provider: the order fails and the funds return.
    await inject(client, 'qrpay', 'unknown');
    const key2 = randomUUID();
    assert.equal((await pay(client, m.external, body, key2)).status, 502);
    const retry2 = await pay(client, m.external, body, key2);
    assert.equal(retry2.status, 201);
    assert.equal(retry2.body.status, 'failed');
    assert.equal((await sgd(client, m.external)).available, '90.00');
  });

  it('parallel requests with one key create one order and freeze once', async () => {
    const { client, m } = await sgdMerchantMember();
    const key = randomUUID();
    const body = { qr_code: payNow({ amount: '7' }), asset: 'SGD' };
    const results = await Promise.all(Array.from({ length: 5 }, () => pay(client, m.external, body, key)));
    for (const r of results) assert.ok([201, 409].includes(r.status), `${r.status} ${JSON.stringify(r.body)}`);
    const orders = await ordersOf(m);
    assert.equal(orders.length, 1);
    assert.deepEqual(await entriesOf(orders[0]!.id), ['qrpay.complete', 'qrpay.freeze']);
    assert.equal((await sgd(client, m.external)).available, '93.00');
  });

  it('refunds a completed payment to available once, through the operator', async () => {
    const { client, m } = await sgdMerchantMember();
    const done = (await pay(client, m.external, { qr_code: payNow({ amount: '33.30' }), asset: 'SGD' })).body;
    assert.equal(done.status, 'completed');
    assert.equal((await sgd(client, m.external)).available, '66.70');
    const refund = await admin(service, 'POST', `/admin/v1/qrpay/payments/${done.id}/refund`, {});
    assert.equal(refund.status, 200, JSON.stringify(refund.body));
    assert.equal(refund.body.status, 'refunded');
    assert.equal(refund.body.status_version, 3);
    assert.equal(refund.body.replayed, false);
    assert.equal((await sgd(client, m.external)).available, '100.00');
    const again = await admin(service, 'POST', `/admin/v1/qrpay/payments/${done.id}/refund`, {});
    assert.equal(again.body.replayed, true);
    assert.equal((await sgd(client, m.external)).available, '100.00');
    assert.deepEqual(await entriesOf(done.id), ['qrpay.complete', 'qrpay.freeze', 'qrpay.refund']);
    assert.deepEqual(await eventsOf(done.id), ['qrpay.order.completed@2', 'qrpay.order.refunded@3']);
    const read = (await client.request({
      method: 'GET',
      path: `/v1/qrpay/payments/${done.id}`,
      onBehalfOf: m.external,
    })) as any;
    assert.equal(read.status, 'refunded');

    // A provider answering the refund with any status but refunded (one outside its enumeration):
    // nothing credited, 502, one alert.
    const other = (await pay(client, m.external, { qr_code: payNow({ amount: '10' }), asset: 'SGD' })).body;
    const qrpay = service.ctx.upstreams.qrpay;
    const realRefund = qrpay.refund;
    qrpay.refund = async () => ({
      kind: 'accepted',
      providerOrderId: 'p-1',
      status: 'SANDBOX_UNKNOWN_STATUS',
      detail: {},
    });
    try {
      for (let i = 0; i < 2; i++) {
        const unsure = await admin(service, 'POST', `/admin/v1/qrpay/payments/${other.id}/refund`, {});
        assert.deepEqual([unsure.status, unsure.body.code], [502, 'upstream_error']);
      }
    } finally {
      qrpay.refund = realRefund;
    }
    assert.equal((await sgd(client, m.external)).available, '90.00', 'nothing credited');
    assert.deepEqual(await entriesOf(other.id), ['qrpay.complete', 'qrpay.freeze']);
    const alerts = (await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status')).body.data.filter(
      (a: any) => a.object_id === other.id,
    );
    assert.equal(alerts.length, 1, 'one alert');

    await inject(client, 'qrpay', 'reject');
    const failed = (await pay(client, m.external, { qr_code: payNow({ amount: '1' }), asset: 'SGD' })).body;
    assert.equal(
      (await admin(service, 'POST', `/admin/v1/qrpay/payments/${failed.id}/refund`, {})).body.code,
      'state_invalid',
    );
    assert.equal((await admin(service, 'POST', '/admin/v1/qrpay/payments/qrp_nope/refund', {})).status, 404);
  });

  it('needs qrpay scopes', async () => {
    const { client } = await newMerchantClient(service, {
      scopes: ['members:write', 'deposits:write', 'balances:read'],
    });
    await client.members.create({ external_member_id: 'noscope' });
    await expectCode(client.request({ method: 'GET', path: '/v1/qrpay/schemes' }), 'insufficient_scope', 403);
    const res = await pay(client, 'noscope', { qr_code: payNow({ amount: '1' }), asset: 'SGD' });
    assert.equal(res.body.code, 'insufficient_scope');
  });
});
