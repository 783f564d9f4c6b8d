/**
 * Conformance checks of earn and QR payments against the reference (merchant-wallet-api.md:
 * "Payment-like orders", "Events", "Errors", "Idempotency"; extensions 7, 8, 10) that the area
 * suites did not pin down: rounding at the asset's scale, nothing accrued past maturity, access
 * to another member's objects, the on-behalf-of requirement, replays that never post twice, the
 * list filters, and the events' fields.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { verifyLedger } from '../src/money/index.js';
import { balanceOf, fundedMember, entryKinds, eventsAbout, earnSetup, rowById } from './support/fixtures.js';
import { newMerchantClient, useTestService, postgresOnly, instantUpstreams } from './support/service.js';
import { expectCode } from './support/expect.js';
import { payNow } from './support/emv.js';
import { SimulatedQrPay } from '../src/upstreams/qrpay/simulator.js';
import { addSandboxOffset } from '../src/platform/queries/clock.js';
import { earnTickers } from '../src/modules/earn/workers.js';

describe('earn and QR payments: conformance audit', () => {
  let service: RunningService;
  useTestService({ config: instantUpstreams, merchant: false }, (s) => ({ service } = s));

  const setup = (amount = '2000') => earnSetup(service, amount, 'a');
  const usdt = async (client: MerchantWalletClient, m: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === 'USDT') as any;
  const req = (client: MerchantWalletClient, method: string, path: string, opts: Record<string, unknown> = {}) =>
    client.requestRaw({ method, path, ...opts } as any);

  it(
    'earn: interest of an amount that does not divide evenly is rounded down per day at the asset scale; ' +
      'nothing accrues past maturity',
    async () => {
      const { client, m, flexible, fixed, subscribe } = await setup();
      const flex = await subscribe(flexible, '333.333333');
      const term = await subscribe(fixed, '333.333333');
      // 333.333333 × 3.65 % / 365 = 0.0333333333 → 0.033333 a day; × 7.30 % → 0.066666 a day.
      await client.sandbox.advanceClock(60 * 86_400 + 60);
      const f = await client.earn.order(flex.id, { onBehalfOf: m });
      assert.equal(f.interest_paid, '1.999980', '60 days × 0.033333');
      const t = await client.earn.order(term.id, { onBehalfOf: m });
      assert.equal(t.status, 'settled');
      assert.equal(t.interest_paid, '1.999980', '30 days × 0.066666, not 60');
      assert.equal(t.interest_accrued, '0.000000');
      const b = await usdt(client, m);
      assert.equal(b.earn, '333.333333');
      assert.equal(b.available, (2000 - 666.666666 + 333.333333 + 1.99998 + 1.99998).toFixed(6));
      assert.equal(b.total, (2000 + 1.99998 + 1.99998).toFixed(6));
      const positions = await client.earn.positions({ onBehalfOf: m });
      const closed = positions.find((p) => p.id === term.position_id)!;
      assert.deepEqual([closed.status, closed.redeemable], ['closed', false]);
      await expectCode(client.earn.redeem(term.position_id, { onBehalfOf: m }), 'state_invalid', 400);
    },
  );

  it(
    'earn: a fixed-term position redeemed at maturity, before the daily process has settled it, is settled ' +
      'then (not state_invalid), once',
    async () => {
      const { client, m, fixed, subscribe } = await setup();
      const term = await subscribe(fixed, '500');
      await expectCode(client.earn.redeem(term.position_id, { onBehalfOf: m }), 'state_invalid', 400);
      // The 30 days have passed and the ticker has not come round yet (as in production, where it
      // runs once a minute): the whole term falls due now.
      const row = await rowById(service, 'earn_orders', term.id);
      const started = new Date(row.started_at).getTime();
      await service.ctx.db
        .updateTable('earn_orders')
        .set({
          started_at: new Date(started - 30 * 86_400_000),
          matures_at: new Date(started),
          next_accrual_at: new Date(started - 29 * 86_400_000),
        })
        .where('id', '=', term.id)
        .execute();
      const key = randomUUID();
      const res = await req(client, 'POST', `/v1/earn/positions/${term.position_id}/redeem`, {
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(
        [(res.body as any).status, (res.body as any).redeemable, (res.body as any).interest_paid],
        ['closed', false, '3.000000'],
      );
      const o = await client.earn.order(term.id, { onBehalfOf: m });
      assert.deepEqual([o.status, o.status_version, o.interest_paid], ['settled', 2, '3.000000']);
      const b = await usdt(client, m);
      assert.deepEqual([b.available, b.earn], ['2003.000000', '0.000000']);
      const events = await service.ctx.db
        .selectFrom('events')
        .select(['status_version'])
        .where('type', '=', 'earn.order.settled')
        .where('object_id', '=', term.id)
        .execute();
      assert.deepEqual(events, [{ status_version: 2 }]);
      await client.sandbox.advanceClock(2 * 86_400);
      await expectCode(client.earn.redeem(term.position_id, { onBehalfOf: m }), 'state_invalid', 400);
      assert.equal((await usdt(client, m)).available, '2003.000000', 'settled once');
      assert.deepEqual(await entryKinds(service, term.id), ['earn.mature', 'earn.subscribe']);
      assert.deepEqual((await verifyLedger(service.ctx.db)).problems, []);
    },
  );

  it(
    'earn: another member sees neither the order nor the position; ' + 'redeeming it is 404 and moves nothing',
    async () => {
      const { client, m, flexible, subscribe } = await setup();
      const other = `b-${randomUUID().slice(0, 8)}`;
      await client.members.create({ external_member_id: other });
      const o = await subscribe(flexible, '100');
      await expectCode(client.earn.order(o.id, { onBehalfOf: other }), 'not_found', 404);
      assert.deepEqual(await client.earn.positions({ onBehalfOf: other }), []);
      assert.deepEqual(await client.earn.orders({ onBehalfOf: other }), []);
      await expectCode(client.earn.redeem(o.position_id, { onBehalfOf: other }), 'not_found', 404);
      assert.equal((await usdt(client, m)).earn, '100.000000');
      // The merchant principal sees every member's order.
      assert.equal((await client.earn.order(o.id)).id, o.id);
    },
  );

  it(
    'earn: subscribing and redeeming need a member (member_context_required); a product of the other ' +
      'environment is not available',
    async () => {
      const { client, m, flexible, subscribe } = await setup();
      const sub = await req(client, 'POST', '/v1/earn/orders', {
        body: { product_id: flexible.id, amount: '1' },
        idempotencyKey: randomUUID(),
      });
      assert.deepEqual([sub.status, (sub.body as any).code], [400, 'member_context_required']);
      const o = await subscribe(flexible, '1');
      const red = await req(client, 'POST', `/v1/earn/positions/${o.position_id}/redeem`, {
        idempotencyKey: randomUUID(),
      });
      assert.deepEqual([red.status, (red.body as any).code], [400, 'member_context_required']);
      const prodId = flexible.id.replace('_s_', '_p_');
      assert.notEqual(prodId, flexible.id);
      await expectCode(
        client.earn.subscribe({ product_id: prodId, amount: '1' }, { onBehalfOf: m }),
        'product_not_available',
        400,
      );
    },
  );

  it(
    'earn: a redemption replayed with its key answers the first result and credits once; a new key is ' +
      'state_invalid',
    async () => {
      const { client, m, flexible, subscribe } = await setup();
      const o = await subscribe(flexible, '100');
      const key = randomUUID();
      const first = await req(client, 'POST', `/v1/earn/positions/${o.position_id.slice(4)}/redeem`, {
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const again = await req(client, 'POST', `/v1/earn/positions/${o.position_id.slice(4)}/redeem`, {
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(again.status, 200);
      assert.equal(again.headers['x-idempotent-replay'], 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal((await usdt(client, m)).available, '2000.000000');
      assert.deepEqual(await entryKinds(service, o.id), ['earn.redeem', 'earn.subscribe']);
      await expectCode(client.earn.redeem(o.position_id, { onBehalfOf: m }), 'state_invalid', 400);
    },
  );

  it(
    'earn: the lists filter by status (orders: active/settled/redeemed; positions: active/closed); an unknown ' +
      'status is invalid_request',
    async () => {
      const { client, m, flexible, fixed, subscribe } = await setup();
      const a = await subscribe(flexible, '10');
      const r = await subscribe(flexible, '10');
      await client.earn.redeem(r.position_id, { onBehalfOf: m });
      const t = await subscribe(fixed, '10');
      await client.sandbox.advanceClock(30 * 86_400 + 60);
      const ids = async (path: string, status: string) =>
        ((await client.request({ method: 'GET', path, query: { status }, onBehalfOf: m })) as any).data
          .map((o: any) => o.id)
          .sort();
      assert.deepEqual(await ids('/v1/earn/orders', 'active'), [a.id]);
      assert.deepEqual(await ids('/v1/earn/orders', 'redeemed'), [r.id]);
      assert.deepEqual(await ids('/v1/earn/orders', 'settled'), [t.id]);
      assert.deepEqual(await ids('/v1/earn/positions', 'active'), [a.position_id]);
      assert.deepEqual(await ids('/v1/earn/positions', 'closed'), [r.position_id, t.position_id].sort());
      const bad = await req(client, 'GET', '/v1/earn/orders', { query: { status: 'done' }, onBehalfOf: m });
      assert.deepEqual([bad.status, (bad.body as any).code], [400, 'invalid_request']);
      const page = (await client.request({
        method: 'GET',
        path: '/v1/earn/orders',
        query: { limit: 2 },
        onBehalfOf: m,
      })) as any;
      assert.equal(page.data.length, 2);
      assert.equal(page.has_more, true);
      const rest = (await client.request({
        method: 'GET',
        path: '/v1/earn/orders',
        query: { limit: 2, cursor: page.next_cursor },
        onBehalfOf: m,
      })) as any;
      assert.equal(rest.has_more, false);
      assert.deepEqual([...page.data, ...rest.data].map((o: any) => o.id).sort(), [a.id, r.id, t.id].sort());
    },
  );

  it(
    "earn: earn.order.settled carries the member's external id; the fixed-term one names the order, the payout " +
      'the member',
    async () => {
      const { client, m, memberId, flexible, fixed, subscribe } = await setup();
      await subscribe(flexible, '1000');
      const t = await subscribe(fixed, '500');
      await client.sandbox.advanceClock(30 * 86_400 + 60);
      const events = await service.ctx.db
        .selectFrom('events')
        .selectAll()
        .where('type', '=', 'earn.order.settled')
        .where('object_id', 'in', [memberId, t.id])
        .execute();
      assert.equal(events.length, 31);
      for (const e of events as any[]) assert.equal(e.external_member_id, m);
      // The Events table's lookup: data.id found in GET /v1/earn/orders is a fixed-term maturity;
      // not found (404, never a 500) is a flexible payout, read in GET /v1/earn/positions.
      assert.equal((await client.earn.order(t.id, { onBehalfOf: m })).status, 'settled');
      await expectCode(client.earn.order(memberId, { onBehalfOf: m }), 'not_found', 404);
      await expectCode(client.earn.order(memberId), 'not_found', 404);
    },
  );
  // ---------------------------------------------------------------------------------------------
  // QR payments

  const qrMember = (client: MerchantWalletClient, amount = '100.00') => fundedMember(client, amount, 'SGD');
  const sgd = (client: MerchantWalletClient, member: string) => balanceOf(client, member, 'SGD');
  const pay = (
    client: MerchantWalletClient,
    member: string | undefined,
    body: Record<string, unknown>,
    idempotencyKey: string = randomUUID(),
  ) =>
    client.requestRaw({ method: 'POST', path: '/v1/qrpay/payments', body, onBehalfOf: member, idempotencyKey } as any);
  const kinds = (id: string) => entryKinds(service, id);
  const eventsOf = async (id: string) =>
    (await eventsAbout(service, id, ['type', 'status_version', 'external_member_id', 'object'])).map(
      (e) => `${e.type}@${e.status_version}:${e.object}:${e.external_member_id}`,
    );

  it(
    'qrpay: paying and decoding need a member (member_context_required); bad amount formats are ' +
      'invalid_request, never rounded',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = await qrMember(client);
      const res = await pay(client, undefined, { qr_code: payNow({ amount: '1' }), asset: 'SGD' });
      assert.deepEqual([res.status, (res.body as any).code], [400, 'member_context_required']);
      const dec = await client.requestRaw({
        method: 'POST',
        path: '/v1/qrpay/decode',
        body: { qr_code: payNow() },
      } as any);
      assert.deepEqual([dec.status, (dec.body as any).code], [400, 'member_context_required']);
      for (const amount of ['1e1', '-1', ' 1', '+1', '01', '1.', '.5', '1,00', '0.005', 1]) {
        const r = await pay(client, m.external, { qr_code: payNow(), amount, asset: 'SGD' });
        assert.deepEqual(
          [r.status, (r.body as any).code],
          [400, 'invalid_request'],
          `amount ${JSON.stringify(amount)}`,
        );
      }
      const bal = await sgd(client, m.external);
      assert.deepEqual([bal.available, bal.frozen], ['100.00', '0.00']);
    },
  );

  it(
    'qrpay: decode is read-only: a preset on the money-moving step (reject, timeout, ' + 'unknown) does not change it',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = await qrMember(client);
      for (const behavior of ['reject', 'timeout', 'unknown', 'unknown_status']) {
        await client.request({
          method: 'POST',
          path: '/v1/sandbox/upstream-behavior',
          body: { upstream: 'qrpay', behavior },
        });
        const d = await client.qrpay.decode(payNow({ amount: '2.5' }), { onBehalfOf: m.external });
        assert.deepEqual([d.scheme, d.amount, d.payable], ['sg_paynow', '2.50', true], behavior);
      }
    },
  );

  it(
    "qrpay: events carry the member's external id and object qrpay_order; " + 'status_version rises with each state',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = await qrMember(client);
      const done = (await pay(client, m.external, { qr_code: payNow({ amount: '7' }), asset: 'SGD' })).body as any;
      assert.equal(done.status, 'completed');
      assert.deepEqual(await eventsOf(done.id), [`qrpay.order.completed@2:qrpay_order:${m.external}`]);
    },
  );

  it(
    'qrpay: reconciliation that finds the payment already refunded completes it (v2) and refunds it (v3), ' +
      'crediting available once',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = await qrMember(client);
      const original = service.ctx.upstreams.qrpay;
      const slow = new SimulatedQrPay(service.ctx.db, { confirmDelayMs: 3_600_000 });
      service.ctx.upstreams.qrpay = slow;
      try {
        const res = await pay(client, m.external, { qr_code: payNow({ amount: '20' }), asset: 'SGD' });
        assert.equal((res.body as any).status, 'processing');
        const id = (res.body as any).id;
        slow.status = async () => ({ kind: 'found', providerOrderId: 'p-r', status: 'refunded' });
        await service.workers.jobs.drain();
        await service.workers.tick();
        await service.workers.tick();
        const got = (await client.request({
          method: 'GET',
          path: `/v1/qrpay/payments/${id}`,
          onBehalfOf: m.external,
        })) as any;
        assert.deepEqual([got.status, got.status_version], ['refunded', 3]);
        const bal = await sgd(client, m.external);
        assert.deepEqual([bal.available, bal.frozen], ['100.00', '0.00']);
        assert.deepEqual(await kinds(id), ['qrpay.complete', 'qrpay.freeze', 'qrpay.refund']);
        assert.deepEqual(
          (await eventsOf(id)).map((e) => e.split(':')[0]),
          ['qrpay.order.completed@2', 'qrpay.order.refunded@3'],
        );
      } finally {
        service.ctx.upstreams.qrpay = original;
      }
    },
  );

  it(
    'qrpay: a suspended order (status outside the enumeration) is listed as processing and found by ' +
      'status=processing',
    async () => {
      const { client } = await newMerchantClient(service);
      const m = await qrMember(client);
      await client.request({
        method: 'POST',
        path: '/v1/sandbox/upstream-behavior',
        body: { upstream: 'qrpay', behavior: 'unknown_status' },
      });
      const res = await pay(client, m.external, { qr_code: payNow({ amount: '3' }), asset: 'SGD' });
      assert.equal((res.body as any).status, 'processing');
      const listed = (await client.request({
        method: 'GET',
        path: '/v1/qrpay/payments',
        query: { status: 'processing' },
        onBehalfOf: m.external,
      })) as any;
      assert.deepEqual(
        listed.data.map((o: any) => [o.id, o.status]),
        [[(res.body as any).id, 'processing']],
      );
      assert.equal((await sgd(client, m.external)).frozen, '3.00');
    },
  );
});

describe('qrpay: a key is bound to the member it was used for', () => {
  let service: RunningService;
  useTestService({ config: instantUpstreams, merchant: false }, (s) => ({ service } = s));

  it(
    'after a 504, the same key and body on behalf of another member never resumes (nor shows) the first ' +
      "member's order",
    async () => {
      const { client } = await newMerchantClient(service);
      const members: string[] = [];
      for (let i = 0; i < 2; i++) {
        const external = `k-${randomUUID().slice(0, 8)}`;
        await client.members.create({ external_member_id: external });
        await client.deposits.create({
          member_id: external,
          asset: 'SGD',
          amount: '50',
          tx_hash: `bank-${randomUUID()}`,
        });
        members.push(external);
      }
      const [a, b] = members as [string, string];
      await client.request({
        method: 'POST',
        path: '/v1/sandbox/upstream-behavior',
        body: { upstream: 'qrpay', behavior: 'timeout' },
      });
      const key = randomUUID();
      const body = { qr_code: payNow({ amount: '5' }), asset: 'SGD' };
      const first = await client.requestRaw({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body,
        onBehalfOf: a,
        idempotencyKey: key,
      } as any);
      assert.equal(first.status, 504);
      const other = await client.requestRaw({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body,
        onBehalfOf: b,
        idempotencyKey: key,
      } as any);
      assert.deepEqual(
        [other.status, (other.body as any).code],
        [409, 'idempotency_key_reused'],
        JSON.stringify(other.body),
      );
      const bBal = ((await client.balances.list({ onBehalfOf: b })) as any[]).find((x) => x.asset === 'SGD');
      assert.deepEqual([bBal.available, bBal.frozen], ['50.00', '0.00']);
    },
  );
});

describe(
  'earn: redeeming a matured fixed-term position while the daily process settles it (PostgreSQL)',
  { skip: postgresOnly() },
  () => {
    let service: RunningService;
    useTestService({ merchant: false }, (s) => ({ service } = s));

    it(
      'settled once, by one of them: one maturity entry, one event, ' + 'principal and interest credited once',
      async () => {
        const { client, merchantId } = await newMerchantClient(service);
        const m = `c-${randomUUID().slice(0, 8)}`;
        await client.members.create({ external_member_id: m });
        await client.deposits.create({ member_id: m, asset: 'USDT', amount: '1000', tx_hash: `t-${randomUUID()}` });
        const fixed = (await client.earn.products()).find((p) => p.type === 'fixed')!;
        const term = await client.earn.subscribe({ product_id: fixed.id, amount: '500' }, { onBehalfOf: m });
        await addSandboxOffset(service.ctx.db, merchantId, BigInt(30 * 86_400_000 + 60_000));
        const accrue = async () => {
          for (let i = 0; i < 31; i++) await earnTickers[0]!.run(service.ctx);
        };
        const [, , ...rs] = await Promise.all([
          accrue(),
          accrue(),
          ...Array.from({ length: 4 }, () =>
            client.requestRaw({
              method: 'POST',
              path: `/v1/earn/positions/${term.position_id}/redeem`,
              onBehalfOf: m,
              idempotencyKey: randomUUID(),
            } as any),
          ),
        ]);
        const codes = rs.map((r) => (r.status === 200 ? 200 : (r.body as any).code));
        assert.ok(codes.filter((c) => c === 200).length <= 1, JSON.stringify(codes));
        assert.ok(
          codes.every((c) => c === 200 || c === 'state_invalid'),
          JSON.stringify(codes),
        );
        const o = await client.earn.order(term.id, { onBehalfOf: m });
        assert.deepEqual([o.status, o.status_version, o.interest_paid], ['settled', 2, '3.000000']);
        assert.deepEqual(await entryKinds(service, term.id), ['earn.mature', 'earn.subscribe']);
        const events = await service.ctx.db
          .selectFrom('events')
          .select('id')
          .where('type', '=', 'earn.order.settled')
          .where('object_id', '=', term.id)
          .execute();
        assert.equal(events.length, 1);
        const b = ((await client.balances.list({ onBehalfOf: m })) as any[]).find((x) => x.asset === 'USDT');
        assert.deepEqual([b.available, b.earn], ['1003.000000', '0.000000']);
      },
    );
  },
);
