/**
 * Earn through HTTP via the SDK: products (extensions 7 defaults), subscription (available →
 * earn), positions, flexible redemption, fixed-term redemption refused before maturity, a month
 * of accrual by the sandbox clock (daily flexible payouts, fixed-term maturity with principal and
 * interest), the `earn.order.settled` events exactly as the Events table, interest funded from
 * the platform's named account; the ledger verified after each.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, useTestService, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import { earnTickers } from '../src/modules/earn/workers.js';
import { earnSetup, rowById } from './support/fixtures.js';

describe('earn', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  // Every test ends on a ledger that verifies.
  afterEach(() => expectLedgerClean(service));

  const setup = () => earnSetup(service);
  const usdt = async (client: MerchantWalletClient, m: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === 'USDT') as any;

  it('lists the default products: one flexible and one fixed-term (30 days) in USDT', async () => {
    const { client, m } = await setup();
    const products = await client.earn.products({ onBehalfOf: m });
    assert.deepEqual(
      products.map((p) => [p.asset, p.type, p.term_days, p.apr]),
      [
        ['USDT', 'flexible', 0, '0.0365'],
        ['USDT', 'fixed', 30, '0.0730'],
      ],
    );
    assert.match(products[0]!.id, /^epr_/);
  });

  it(
    'subscribes (available → earn), lists orders and positions, redeems a flexible position; no event at the ' +
      'start',
    async () => {
      const { client, m, flexible, fixed, subscribe } = await setup();
      const order = await subscribe(flexible, '500');
      assert.match(order.id, /^ero_/);
      assert.equal(order.status, 'active');
      assert.equal(order.amount, '500.000000');
      let b = await usdt(client, m);
      assert.equal(b.available, '1500.000000');
      assert.equal(b.earn, '500.000000');
      const positions = await client.earn.positions({ onBehalfOf: m });
      assert.equal(positions.length, 1);
      assert.equal(positions[0]!.id, order.position_id);
      assert.equal(positions[0]!.redeemable, true);
      assert.deepEqual(
        (await client.earn.orders({ onBehalfOf: m })).map((o) => o.id),
        [order.id],
      );
      const fx = await subscribe(fixed, '100');
      assert.ok(fx.matures_at);
      assert.equal(
        (
          await service.ctx.db
            .selectFrom('events')
            .select('id')
            .where('type', 'like', 'earn.%')
            .where('object_id', 'in', [order.id, fx.id])
            .execute()
        ).length,
        0,
      );
      await expectCode(client.earn.redeem(fx.position_id, { onBehalfOf: m }), 'state_invalid', 400);
      const redeemed = await client.earn.redeem(order.position_id, { onBehalfOf: m });
      assert.equal(redeemed.status, 'closed');
      b = await usdt(client, m);
      assert.equal(b.available, '1900.000000');
      assert.equal(b.earn, '100.000000');
      await expectCode(client.earn.redeem(order.position_id, { onBehalfOf: m }), 'state_invalid', 400);
      await expectCode(client.earn.redeem(`epo_${randomUUID()}`, { onBehalfOf: m }), 'not_found', 404);
    },
  );

  it('a redemption pays the days already due first, even when the ticker has not run them yet', async () => {
    const { client, m, flexible, subscribe } = await setup();
    const order = await subscribe(flexible, '1000');
    // Day 1 falls due now (as if the ticker had not come round yet): 1000 × 3.65 % / 365 = 0.1.
    const row = await rowById(service, 'earn_orders', order.id);
    await service.ctx.db
      .updateTable('earn_orders')
      .set({ next_accrual_at: row.started_at })
      .where('id', '=', order.id)
      .execute();
    await client.earn.redeem(order.position_id, { onBehalfOf: m });
    const b = await usdt(client, m);
    assert.equal(b.available, '2000.100000', 'principal back and the finished day paid');
    assert.equal(b.earn, '0.000000');
    const paid = await rowById(service, 'earn_orders', order.id);
    assert.deepEqual([String(paid.interest_paid), paid.days_accrued, paid.status], ['100000', 1, 'redeemed']);
  });

  it('refuses: unknown product, amount out of range, more than available', async () => {
    const { client, m, flexible, fixed } = await setup();
    for (const [product_id, amount, code] of [
      ['epr_nope', '10', 'product_not_available'],
      [fixed.id, '5', 'amount_out_of_range'],
      [flexible.id, '2000.000001', 'insufficient_balance'],
      [flexible.id, '1.0000001', 'invalid_request'],
    ] as const) {
      await expectCode(client.earn.subscribe({ product_id, amount }, { onBehalfOf: m }), code, 400);
    }
  });

  it(
    'a month by the sandbox clock: daily flexible payouts, fixed-term maturity with principal and interest, ' +
      'events as the Events table',
    async () => {
      const { client, m, memberId, flexible, fixed, subscribe } = await setup();
      const flex = await subscribe(flexible, '1000');
      const term = await subscribe(fixed, '500');
      // Day 29 (the fixed term's 29 days accrued, not matured).
      await client.sandbox.advanceClock(29 * 86_400 + 60);
      let o = await client.earn.order(term.id, { onBehalfOf: m });
      assert.equal(o.status, 'active');
      assert.equal(o.interest_accrued, '2.900000', '500 × 7.30 % / 365 = 0.1 a day, 29 days');
      await expectCode(client.earn.redeem(term.position_id, { onBehalfOf: m }), 'state_invalid', 400);
      await client.sandbox.advanceClock(86_400);
      o = await client.earn.order(term.id, { onBehalfOf: m });
      assert.equal(o.status, 'settled');
      assert.equal(o.status_version, 2);
      assert.equal(o.interest_paid, '3.000000');
      assert.equal(o.interest_accrued, '0.000000');
      const f = await client.earn.order(flex.id, { onBehalfOf: m });
      assert.equal(f.status, 'active');
      assert.equal(f.interest_paid, '3.000000', '1000 × 3.65 % / 365 = 0.1 a day, 30 days, paid daily');
      const b = await usdt(client, m);
      assert.equal(
        b.available,
        '1006.000000',
        '2000 - 1500 subscribed + 500 principal back + 3 fixed-term interest + 3 flexible payouts',
      );
      assert.equal(b.earn, '1000.000000');
      const events = await service.ctx.db
        .selectFrom('events')
        .select(['type', 'object', 'object_id', 'status', 'status_version'])
        .where('type', '=', 'earn.order.settled')
        .where('object_id', 'in', [memberId, term.id])
        .orderBy('seq')
        .execute();
      const payouts = events.filter((e) => e.object_id === memberId);
      assert.equal(payouts.length, 30);
      for (const e of payouts)
        assert.deepEqual(e, {
          type: 'earn.order.settled',
          object: 'earn_order',
          object_id: memberId,
          status: 'settled',
          status_version: 0,
        });
      assert.deepEqual(
        events.filter((e) => e.object_id === term.id),
        [
          {
            type: 'earn.order.settled',
            object: 'earn_order',
            object_id: term.id,
            status: 'settled',
            status_version: 2,
          },
        ],
      );
      // The interest came from the platform's named account.
      const funded = await service.ctx.db
        .selectFrom('postings as p')
        .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
        .innerJoin('journal_entries as e', 'e.id', 'p.entry_id')
        .select((eb) => eb.fn.sum<string>('p.amount').as('total'))
        .where('a.owner_type', '=', 'platform')
        .where('a.bucket', '=', 'earn_interest')
        .where('e.reference_id', 'in', [flex.id, term.id])
        .executeTakeFirstOrThrow();
      assert.equal(BigInt(funded.total), 6_000_000n);
    },
  );

  it("the background ticker runs due days on each merchant's own clock", async () => {
    const { client, m, flexible, subscribe } = await setup();
    const o = await subscribe(flexible, '1000');
    await earnTickers[0]!.run(service.ctx);
    assert.equal((await client.earn.order(o.id, { onBehalfOf: m })).interest_paid, '0.000000');
    await service.ctx.db
      .updateTable('earn_orders')
      .set({ next_accrual_at: new Date(Date.now() - 1000) })
      .where('id', '=', o.id)
      .execute();
    await earnTickers[0]!.run(service.ctx);
    assert.equal((await client.earn.order(o.id, { onBehalfOf: m })).interest_paid, '0.100000');
  });

  it('the operator adds and withdraws products', async () => {
    const { client, m } = await setup();
    const created = await admin(service, 'POST', '/admin/v1/earn/products', {
      environment: 'sandbox',
      asset: 'USDT',
      type: 'fixed',
      term_days: 7,
      apr_bps: 500,
      min_amount: '1',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.ok((await client.earn.products()).some((p) => p.id === created.body.id));
    await admin(service, 'PATCH', `/admin/v1/earn/products/${created.body.id}`, { enabled: false });
    assert.ok(!(await client.earn.products()).some((p) => p.id === created.body.id));
    await expectCode(
      client.earn.subscribe({ product_id: created.body.id, amount: '10' }, { onBehalfOf: m }),
      'product_not_available',
      400,
    );
  });

  it(
    'POST of a product: a zero min_amount or max_amount, or a max below the min, is 400 invalid_fields (zero ' +
      'was a 500 from the table)',
    async () => {
      const base = { environment: 'sandbox', asset: 'USDT', type: 'flexible', term_days: 0, apr_bps: 100 };
      for (const [extra, key, reason] of [
        [{ min_amount: '0' }, 'min_amount', 'not_positive'],
        [{ min_amount: '0.000000' }, 'min_amount', 'not_positive'],
        [{ min_amount: '1', max_amount: '0.0' }, 'max_amount', 'not_positive'],
        [{ min_amount: '10', max_amount: '9.999999' }, 'max_amount', 'below_min_amount'],
      ] as const) {
        const res = await admin(service, 'POST', '/admin/v1/earn/products', { ...base, ...extra });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.code, 'invalid_fields');
        assert.deepEqual(res.body.fields, [{ key, reason }], JSON.stringify(res.body));
      }
      const ok = await admin(service, 'POST', '/admin/v1/earn/products', {
        ...base,
        min_amount: '10',
        max_amount: '10',
        environment: 'production',
      });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      assert.deepEqual([ok.body.min_amount, ok.body.max_amount], ['10.000000', '10.000000']);
    },
  );

  it(
    'PATCH of a product changes only enabled and apr_bps: a body naming other keys is refused with them named, ' +
      'nothing written',
    async () => {
      const created = await admin(service, 'POST', '/admin/v1/earn/products', {
        environment: 'sandbox',
        asset: 'USDT',
        type: 'fixed',
        term_days: 30,
        apr_bps: 400,
        min_amount: '5',
        max_amount: '100',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const refused = await admin(service, 'PATCH', `/admin/v1/earn/products/${created.body.id}`, {
        apr_bps: 450,
        min_amount: '0',
        max_amount: null,
        term_days: 0,
        type: 'flexible',
        asset: 'BTC',
        environment: 'production',
      });
      assert.deepEqual([refused.status, refused.body.code], [400, 'invalid_request'], JSON.stringify(refused.body));
      assert.match(
        refused.body.message,
        new RegExp(
          'Unknown fields: min_amount, max_amount, term_days, type, asset \\(6 in all\\)\\. ' +
            'This call takes: enabled, apr_bps\\.',
        ),
      );
      const patched = await admin(service, 'PATCH', `/admin/v1/earn/products/${created.body.id}`, { apr_bps: 450 });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual({ ...patched.body, apr: undefined }, { ...created.body, apr: undefined });
      assert.equal(patched.body.apr, '0.0450');
      // A key naming no column at all was a 500 (the UPDATE named it); now a 400 naming it.
      const odd = await admin(service, 'PATCH', `/admin/v1/earn/products/${created.body.id}`, {
        enabled: true,
        constructor: 'x',
        'no such column': 1,
      });
      assert.deepEqual([odd.status, odd.body.code], [400, 'invalid_request'], JSON.stringify(odd.body));
      const row = await rowById(service, 'earn_products', created.body.id);
      assert.deepEqual(
        [row.environment, row.asset, row.type, row.term_days, row.apr_bps],
        ['sandbox', 'USDT', 'fixed', 30, 450],
      );
    },
  );
});
