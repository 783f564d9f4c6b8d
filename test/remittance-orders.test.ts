/**
 * Remittance orders through HTTP via the SDK: gates, price, limits, the freeze, dispatch by the
 * job, a full lifecycle under each sandbox behaviour of the remittance upstream, returns, and the
 * ledger verified after each.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService, expectLedgerClean, instantUpstreams } from './support/service.js';
import { expectCode } from './support/expect.js';
import { returnWatchTicker } from '../src/modules/remittance/orders/return-watch.js';
import { payeeIdsOf } from '../src/modules/remittance/payees/queries.js';
import { applyDecision, failIn } from '../src/modules/remittance/orders/apply.js';
import { sepaPayee, eventsAbout, kycMember, rowById, withUpstream } from './support/fixtures.js';

describe('remittance orders', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({ config: instantUpstreams }, (s) => ({ service, client, merchantId } = s));
  // Every test ends on a ledger that verifies.
  afterEach(() => expectLedgerClean(service));

  /** Runs `f` with the remittance provider answering `behavior`, then `success` again. */
  const withProvider = <T>(behavior: string, f: () => Promise<T>) => withUpstream(client, 'remittance', behavior, f);
  const run = async () => {
    await service.workers.jobs.drain();
  };
  const reconcile = () => service.workers.tick();
  const balance = async (m: string, asset: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === asset) as any;
  const eventsOf = async (id: string) =>
    (await eventsAbout(service, id, ['type', 'status_version'])).map((e) => `${e.type}@${e.status_version}`);
  /** The events of an order that was dispatched and then became each of `after`, in turn. */
  const dispatchedThen = (...after: string[]) =>
    ['pending', 'processing', ...after].map((status, i) => `remittance.order.${status}@${i + 1}`);

  /** A member at KYC level 1 with 1000 USDT and 500 EUR, and a SEPA payee. */
  async function setup(options: { kyc?: number; holder?: [string, string] } = {}) {
    const { external } = await kycMember(service, client, {
      prefix: 'r',
      level: options.kyc,
      deposits: { USDT: '1000', EUR: '500' },
    });
    const payee = await client.remittance.createPayee(sepaPayee(...(options.holder ?? [])), { onBehalfOf: external });
    return { m: external, payee: payee.id };
  }
  const send = (m: string, payee: string, source_asset = 'USDT', source_amount = '100') =>
    client.remittance.create({ payee_id: payee, source_asset, source_amount }, { onBehalfOf: m });
  /** The operator resolves order `id` to `status` and is refused with 400 `state_invalid`: the answer's body. */
  const resolveRefused = async (id: string, status: string, why: string) => {
    const r = await admin(service, 'POST', `/admin/v1/remittances/${id}/resolve`, { status });
    assert.deepEqual([r.status, r.body.code], [400, 'state_invalid'], `${why}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const statusOf = async (m: string, id: string) => (await client.remittance.get(id, { onBehalfOf: m })).status;
  /**
   * A fresh member (setup()) sends 100 USDT while the provider answers `behavior` and the order's jobs run;
   * `then` goes on with the member and the order, the provider still answering `behavior`.
   */
  const sentUnder = async <T>(
    behavior: string,
    then: (sent: { m: string; order: Awaited<ReturnType<typeof send>> }) => Promise<T>,
  ) => {
    const { m, payee } = await setup();
    return withProvider(behavior, async () => {
      const order = await send(m, payee);
      await run();
      return then({ m, order });
    });
  };

  it(
    'dispatches the orders one poll took together: each payee registered once, a payee the provider refuses fails ' +
      'its order alone with the freeze back',
    async () => {
      const ok = await setup();
      const refused = await setup({ holder: ['SIM-REFUSE', 'Holder'] });
      const before = await balance(refused.m, 'USDT');
      const orders = [
        await send(ok.m, ok.payee),
        await send(refused.m, refused.payee),
        await send(ok.m, ok.payee, 'USDT', '50'),
      ];
      await run();
      const [first, second, third] = await Promise.all(
        orders.map((o, i) => client.remittance.get(o.id, { onBehalfOf: i === 1 ? refused.m : ok.m })),
      );
      assert.deepEqual([first!.status, second!.status, third!.status], ['completed', 'failed', 'completed']);
      assert.equal((second as any).failure_reason, 'payee_rejected');
      assert.deepEqual(await eventsOf(second!.id), ['remittance.order.pending@1', 'remittance.order.failed@2']);
      assert.deepEqual(await eventsOf(third!.id), dispatchedThen('completed'));
      assert.equal((await balance(refused.m, 'USDT')).available, before.available, 'the freeze went back');
      assert.equal((await balance(refused.m, 'USDT')).frozen, '0.000000');
      const entity = await service.ctx.db
        .selectFrom('remit_orders as o')
        .innerJoin('remit_payee_entities as e', 'e.id', 'o.entity_id')
        .select(['e.provider_payee_ref'])
        .where('o.id', 'in', [first!.id, second!.id])
        .execute();
      assert.equal(entity.filter((e) => e.provider_payee_ref !== null).length, 1, 'only the accepted payee registered');
    },
  );

  it(
    "success: freezes amount + fee with the order, converts USDT to EUR in the service's favour, dispatches by " +
      'the job and completes',
    async () => {
      const { m, payee } = await setup();
      const order = await send(m, payee);
      assert.match(order.id, /^rmt_/);
      assert.equal(order.status, 'pending');
      assert.equal(order.status_version, 1);
      assert.equal(order.payee_id, payee);
      assert.equal(order.rate, '0.9231481481', 'mid 0.925925925925 less 30 bps, rounded down');
      assert.equal(order.payout_amount, '92.31');
      assert.equal(order.fee, '1.583250', '0.5 % + 1.00 EUR converted back, rounded up');
      assert.equal(order.payout_currency, 'EUR');
      assert.match(order.payout_date!, /^\d{4}-\d{2}-\d{2}$/);
      let usdt = await balance(m, 'USDT');
      assert.equal(usdt.available, '898.416750');
      assert.equal(usdt.frozen, '101.583250');
      await run();
      const done = await client.remittance.get(order.id, { onBehalfOf: m });
      assert.equal(done.status, 'completed');
      assert.equal(done.status_version, 3);
      usdt = await balance(m, 'USDT');
      assert.equal(usdt.available, '898.416750');
      assert.equal(usdt.frozen, '0.000000');
      assert.deepEqual(await eventsOf(order.id), dispatchedThen('completed'));
      const entity = await service.ctx.db
        .selectFrom('remit_payees as p')
        .innerJoin('remit_payee_entities as e', 'e.id', 'p.entity_id')
        .select('e.provider_payee_ref')
        .where('p.seq', '=', (await payeeIdsOf(service.ctx.db)).seqOf(payee)!)
        .executeTakeFirstOrThrow();
      assert.match(entity.provider_payee_ref!, /^RB/, 'registered at dispatch');
    },
  );

  it(
    'an asset bought through the exchange desk (no custody of it) is sent and completes; the fee is the ' +
      "merchant's",
    async () => {
      const external = `r-${randomUUID().slice(0, 8)}`;
      const member = await client.members.create({ external_member_id: external });
      await admin(service, 'POST', `/admin/v1/members/${member.id}/kyc-review`, { decision: 'approved', level: 1 });
      await client.deposits.create({ member_id: external, asset: 'USDT', amount: '100', tx_hash: `t-${randomUUID()}` });
      const bought = await client.exchange.execute(
        { from_asset: 'USDT', to_asset: 'EUR', from_amount: '50' },
        { onBehalfOf: external },
      );
      assert.equal(bought.status, 'completed');
      const custodyOf = async (asset: string) =>
        (await client.merchant.balances()).find((b) => b.asset === asset)?.custody;
      const eurCustody = await custodyOf('EUR');
      const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: external });
      const feeIncome = async () =>
        BigInt(
          String(
            (
              await service.ctx.db
                .selectFrom('ledger_accounts')
                .select('balance')
                .where('owner_type', '=', 'merchant')
                .where('owner_id', '=', merchantId)
                .where('environment', '=', 'sandbox')
                .where('asset', '=', 'EUR')
                .where('bucket', '=', 'fee_income')
                .executeTakeFirst()
            )?.balance ?? 0,
          ),
        );
      const feeBefore = await feeIncome();
      const order = await send(external, payee.id, 'EUR', '20');
      assert.equal(order.fee, '1.10');
      await run();
      assert.equal((await client.remittance.get(order.id, { onBehalfOf: external })).status, 'completed');
      const eur = await balance(external, 'EUR');
      assert.equal(eur.frozen, '0.00');
      const cents = (amount: string) => BigInt(amount.replace('.', ''));
      assert.equal(cents(eur.total), cents(bought.to_amount) - 2110n, 'amount and fee left the member');
      assert.equal(
        await custodyOf('EUR'),
        eurCustody,
        'custody untouched: amount and fee left through settlement clearing',
      );
      assert.equal((await feeIncome()) - feeBefore, 110n, "the fee is the merchant's income");
    },
  );

  it(
    "high-value transfers: at or above the operator's threshold a remittance or a withdrawal needs the " +
      'high_value_transfer level',
    async () => {
      const requirements = await admin(service, 'GET', '/admin/v1/kyc/requirements?environment=sandbox');
      assert.deepEqual(
        requirements.body.data.find((r: any) => r.business === 'high_value_transfer'),
        { business: 'high_value_transfer', min_kyc_level: 2 },
      );
      const put = (min_amount: string | null) =>
        admin(service, 'PUT', '/admin/v1/kyc/high-value-thresholds/usdt', { environment: 'sandbox', min_amount });
      assert.equal((await put('0')).status, 400);
      assert.equal((await put('1.0000001')).status, 400, 'more places than USDT has: refused, not rounded');
      assert.equal(
        (
          await admin(service, 'PUT', '/admin/v1/kyc/high-value-thresholds/NOPE', {
            environment: 'sandbox',
            min_amount: '1',
          })
        ).status,
        404,
      );
      const set = await put('150');
      assert.deepEqual([set.status, set.body], [200, { asset: 'USDT', min_amount: '150.000000' }]);
      assert.deepEqual(
        (await admin(service, 'GET', '/admin/v1/kyc/high-value-thresholds?environment=sandbox')).body.data,
        [{ asset: 'USDT', min_amount: '150.000000' }],
      );
      assert.deepEqual(
        (await admin(service, 'GET', '/admin/v1/kyc/high-value-thresholds?environment=production')).body.data,
        [],
      );
      try {
        const { m, payee } = await setup();
        await expectCode(send(m, payee, 'USDT', '150'), 'kyc_required', 400);
        const tron = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';
        await expectCode(
          client.withdrawals.create(
            { asset: 'USDT', network: 'TRON', address: tron, amount: '150' },
            { onBehalfOf: m },
          ),
          'kyc_required',
          400,
        );
        assert.equal((await balance(m, 'USDT')).available, '1000.000000', 'a refusal freezes nothing');
        const below = await send(m, payee, 'USDT', '149.999999');
        assert.equal(below.status, 'pending', 'below the threshold level 1 is enough');
        await client.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address: tron, amount: '149' },
          { onBehalfOf: m },
        );
        await send(m, payee, 'EUR', '150');

        const level2 = await setup({ kyc: 2 });
        assert.equal((await send(level2.m, level2.payee, 'USDT', '150')).status, 'pending');
        await client.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address: tron, amount: '200' },
          { onBehalfOf: level2.m },
        );
        await run();
        await expectLedgerClean(service);
      } finally {
        assert.deepEqual((await put(null)).body, { asset: 'USDT', min_amount: null });
      }
      const { m, payee } = await setup();
      assert.equal((await send(m, payee, 'USDT', '150')).status, 'pending', 'no threshold: no amount is high-value');
    },
  );

  it('same currency: rate 1, no spread, fee on top', async () => {
    const { m, payee } = await setup();
    const order = await send(m, payee, 'eur', '100');
    assert.equal(order.rate, '1.0000000000');
    assert.equal(order.payout_amount, '100.00');
    assert.equal(order.fee, '1.50');
    assert.equal((await balance(m, 'EUR')).available, '398.50');
    await run();
    assert.equal((await client.remittance.get(order.id.slice(4), { onBehalfOf: m })).status, 'completed');
  });

  it('reject: the order fails and the freeze is released in full', async () => {
    await sentUnder('reject', async ({ m, order }) => {
      const failed = await client.remittance.get(order.id, { onBehalfOf: m });
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure_reason, 'upstream_rejected');
      const usdt = await balance(m, 'USDT');
      assert.equal(usdt.available, '1000.000000');
      assert.equal(usdt.frozen, '0.000000');
      assert.deepEqual(await eventsOf(order.id), dispatchedThen('failed'));
    });
  });

  // Left processing by the provider's answer, the order waits with its funds frozen until reconciliation asks.
  const reconciledLater = [
    {
      title: 'timeout: never refunded on the timeout; reconciliation finds the provider paid and completes',
      behavior: 'timeout',
      reconciled: { status: 'completed', available: '898.416750' },
    },
    {
      title:
        'unknown: outcome unknown, funds stay frozen; reconciliation learns the provider never received it and ' +
        'fails the order',
      behavior: 'unknown',
      reconciled: { status: 'failed', failureReason: 'upstream_not_found', available: '1000.000000' },
    },
  ];
  for (const { title, behavior, reconciled } of reconciledLater)
    it(title, async () => {
      await sentUnder(behavior, async ({ m, order }) => {
        assert.equal(await statusOf(m, order.id), 'processing');
        assert.equal((await balance(m, 'USDT')).frozen, '101.583250', 'still frozen');
        await reconcile();
        const after = await client.remittance.get(order.id, { onBehalfOf: m });
        assert.equal(after.status, reconciled.status);
        if (reconciled.failureReason) assert.equal(after.failure_reason, reconciled.failureReason);
        const usdt = await balance(m, 'USDT');
        assert.deepEqual([usdt.available, usdt.frozen], [reconciled.available, '0.000000']);
      });
    });

  it('the payout answers of one dispatch run are applied together, each to its own order', async () => {
    // A merchant of its own: the shared one's deposit quota is spent by the tests around.
    const own = (await newMerchantClient(service)).client;
    const members: { m: string; payee: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const { external } = await kycMember(service, own, { prefix: 'w', deposits: { USDT: '1000' } });
      members.push({
        m: external,
        payee: (await own.remittance.createPayee(sepaPayee(), { onBehalfOf: external })).id,
      });
    }
    const sendOwn = (m: string, payee: string) =>
      own.remittance.create({ payee_id: payee, source_asset: 'USDT', source_amount: '100' }, { onBehalfOf: m });
    await withUpstream(own, 'remittance', 'timeout', async () => {
      const orders = [];
      for (const { m, payee } of members) orders.push(await sendOwn(m, payee));
      await run();
      for (const order of orders) {
        const row = await rowById(service, 'remit_orders', order.id);
        assert.deepEqual([row.status, row.upstream_outcome, row.check_count], ['processing', 'timeout', 0]);
        assert.ok(row.next_check_at, 'its re-query scheduled');
      }
    });
    // The same statement carries an answer's own columns, typed by the table (a payout date is a date).
    const orders = [];
    for (const { m, payee } of members) orders.push(await sendOwn(m, payee));
    const ids = orders.map((o) => o.id);
    const news = ids.map((id, i) => ({
      id,
      decision: {
        kind: 'wait' as const,
        outcome: 'accepted' as const,
        providerOrderId: `po-${i}`,
        payoutDate: `2031-01-0${i + 2}`,
      },
    }));
    await service.ctx.db
      .updateTable('remit_orders')
      .set({ status: 'processing', upstream_outcome: 'pending' })
      .where('id', 'in', ids)
      .execute();
    const none = { id: ids[0]!, decision: { kind: 'none' as const } };
    const applied = await applyDecision.many(service.ctx, [...news, none], 'call');
    assert.deepEqual(
      applied.map((a) => ('failed' in a ? 'failed' : a.id)),
      [...ids, ids[0]],
    );
    for (const [i, id] of ids.entries()) {
      const row = await rowById(service, 'remit_orders', id);
      assert.deepEqual(
        [row.upstream_outcome, row.provider_order_id, String(row.payout_date).slice(0, 10)],
        ['accepted', `po-${i}`, `2031-01-0${i + 2}`],
      );
    }
    // Not over what the order learnt since: a late call answer leaves its news alone.
    const late = news.map((n) => ({ ...n, decision: { ...n.decision, providerOrderId: 'late' } }));
    await applyDecision.many(service.ctx, late, 'call');
    assert.equal((await rowById(service, 'remit_orders', ids[0]!)).provider_order_id, 'po-0');
    // Left as the test found them: failed, their freezes back.
    for (const id of ids) await service.ctx.db.transaction().execute((trx) => failIn(trx, id, 'upstream_rejected'));
  });

  it(
    'an operator resolve asks the provider first: a payout it made is completed whatever the operator asked, ' +
      'never refunded',
    async () => {
      await sentUnder('timeout', async ({ m, order }) => {
        assert.equal(
          (await admin(service, 'GET', `/admin/v1/remittances/${order.id}`)).body.internal_status,
          'processing',
        );
        // The operator would fail it; the provider paid it out: the provider's outcome is applied.
        const refused = await resolveRefused(order.id, 'failed', 'the provider paid it out');
        assert.match(refused.message, /provider reports the remittance succeeded: it is now completed/);
        assert.equal(await statusOf(m, order.id), 'completed');
        const usdt = await balance(m, 'USDT');
        assert.deepEqual([usdt.available, usdt.frozen], ['898.416750', '0.000000'], 'paid out, not refunded');
        assert.deepEqual(await eventsOf(order.id), dispatchedThen('completed'));
        const asked = await admin(service, 'POST', `/admin/v1/remittances/${order.id}/resolve`, {
          status: 'completed',
        });
        assert.deepEqual([asked.status, asked.body.status], [200, 'completed']);
      });
    },
  );

  it(
    'unknown_status: suspended (callers see processing) with an operator alert; funds frozen until the ' +
      'operator resolves',
    async () => {
      await sentUnder('unknown_status', async ({ m, order }) => {
        await reconcile();
        assert.equal(await statusOf(m, order.id), 'processing');
        const op = await admin(service, 'GET', `/admin/v1/remittances/${order.id}`);
        assert.equal(op.body.internal_status, 'suspended');
        assert.equal(op.body.provider_status, 'SANDBOX_UNKNOWN_STATUS');
        const alerts = await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100');
        assert.equal(alerts.body.data.filter((a: any) => a.object_id === order.id).length, 1, 'one alert');
        assert.equal((await balance(m, 'USDT')).frozen, '101.583250');
        const resolved = await admin(service, 'POST', `/admin/v1/remittances/${order.id}/resolve`, {
          status: 'completed',
        });
        assert.equal(resolved.body.status, 'completed');
        assert.equal((await balance(m, 'USDT')).frozen, '0.000000');
        assert.deepEqual(await eventsOf(order.id), dispatchedThen('completed'));
      });
    },
  );

  it('returned after completion: the amount comes back to available, the fee is kept', async () => {
    const { m, payee } = await setup();
    const order = await send(m, payee);
    await run();
    await expectCode(client.remittance.sandboxReturn(randomUUID()), 'not_found', 404);
    const returned = await client.remittance.sandboxReturn(order.id);
    assert.equal(returned.status, 'returned');
    assert.equal(returned.status_version, 4);
    const usdt = await balance(m, 'USDT');
    assert.equal(usdt.available, '998.416750');
    assert.deepEqual(await eventsOf(order.id), dispatchedThen('completed', 'returned'));
    const again = await client.remittance.sandboxReturn(order.id.slice(4));
    assert.equal(again.status, 'returned');
    assert.equal((await balance(m, 'USDT')).available, '998.416750', 'once');
  });

  it(
    'illegal moves are refused with state_invalid and post nothing: a return before completion or after ' +
      'failure, an operator resolve of a finished order',
    async () => {
      const { m, payee } = await setup();
      const returnOf = (id: string) => client.remittance.sandboxReturn(id);
      const pending = await send(m, payee, 'EUR', '20');
      await expectCode(returnOf(pending.id), 'state_invalid', 400);
      assert.equal(await statusOf(m, pending.id), 'pending');
      await run();
      assert.equal(await statusOf(m, pending.id), 'completed');
      await resolveRefused(pending.id, 'failed', 'a completed order is not failed afterwards');
      const failed = await withProvider('reject', async () => {
        const sent = await send(m, payee, 'EUR', '30');
        await run();
        return sent;
      });
      assert.equal(await statusOf(m, failed.id), 'failed');
      const before = await balance(m, 'EUR');
      await expectCode(returnOf(failed.id), 'state_invalid', 400);
      await resolveRefused(failed.id, 'completed', 'a failed order is not completed afterwards');
      assert.deepEqual(await balance(m, 'EUR'), before, 'nothing posted by a refused move');
      assert.equal(before.frozen, '0.00');
      assert.equal(
        before.available,
        '478.90',
        '500 less the completed 20 + 1.10 fee; the failed order gave everything back',
      );
      assert.deepEqual(await eventsOf(failed.id), dispatchedThen('failed'));
      assert.deepEqual(await eventsOf(pending.id), dispatchedThen('completed'));
    },
  );

  it(
    'a payout the bank returns later is found by the return watch: asked 1 h, 1, 3, 7, 14 and 30 days after ' +
      "completion on the merchant's clock",
    async () => {
      // A merchant of its own: the test moves its clock by a month.
      const own = await newMerchantClient(service);
      const saved = client;
      client = own.client;
      try {
        const { m, payee } = await setup();
        const returnedLater = await send(m, payee);
        const neverReturned = await send(m, payee);
        await run();
        for (const o of [returnedLater, neverReturned]) assert.equal(await statusOf(m, o.id), 'completed');
        const watchOf = (id: string) =>
          service.ctx.db
            .selectFrom('remit_orders')
            .select(['return_checks', 'return_check_at', 'completed_at'])
            .where('id', '=', id)
            .executeTakeFirstOrThrow();
        const first = await watchOf(neverReturned.id);
        assert.equal(
          first.return_check_at!.getTime() - first.completed_at!.getTime(),
          3_600_000,
          'first asked an hour after completion',
        );
        // The beneficiary's bank sends one payout back: the provider knows; nothing here has asked yet.
        const provider = service.ctx.upstreams.remittance;
        assert.equal(
          (
            await provider.sandboxReturn!.call(
              provider,
              { merchantId: own.merchantId, environment: 'sandbox' },
              returnedLater.id,
            )
          ).kind,
          'accepted',
        );
        await client.sandbox.advanceClock(3_599);
        assert.equal(await statusOf(m, returnedLater.id), 'completed', 'not asked before the hour');
        await client.sandbox.advanceClock(1);
        const returned = await client.remittance.get(returnedLater.id, { onBehalfOf: m });
        assert.equal(returned.status, 'returned');
        assert.equal(returned.status_version, 4);
        assert.deepEqual(await eventsOf(returnedLater.id), dispatchedThen('completed', 'returned'));
        assert.equal(
          (await balance(m, 'USDT')).available,
          '896.833500',
          'one amount back (its fee kept), the other still paid out',
        );
        assert.equal((await watchOf(returnedLater.id)).return_check_at, null, 'a returned order is watched no more');
        // The other payout stays paid: asked on the schedule, then no longer watched after 30 days.
        const once = await watchOf(neverReturned.id);
        assert.equal(once.return_checks, 1);
        assert.equal(once.return_check_at!.getTime() - once.completed_at!.getTime(), 86_400_000);
        await client.sandbox.advanceClock(31 * 86_400);
        const done = await watchOf(neverReturned.id);
        assert.equal(done.return_checks, 6);
        assert.equal(done.return_check_at, null);
        assert.equal(await statusOf(m, neverReturned.id), 'completed');
        await expectLedgerClean(service);
      } finally {
        client = saved;
      }
    },
  );

  it("the return watch also runs as the service's own ticker, on each merchant's time", async () => {
    const { m, payee } = await setup();
    const order = await send(m, payee);
    await run();
    const provider = service.ctx.upstreams.remittance;
    await provider.sandboxReturn!.call(provider, { merchantId, environment: 'sandbox' }, order.id);
    await reconcile();
    assert.equal(await statusOf(m, order.id), 'completed', 'not due yet');
    // Due now (as an hour after completion would be), on the real clock of a merchant never advanced.
    await service.ctx.db
      .updateTable('remit_orders')
      .set({ return_check_at: new Date(Date.now() - 1000) })
      .where('id', '=', order.id)
      .execute();
    await reconcile();
    assert.equal(await statusOf(m, order.id), 'returned');
  });

  it("one order's failed return check does not hold back the others of its run", async () => {
    const { m, payee } = await setup();
    const failing = [await send(m, payee), await send(m, payee), await send(m, payee)];
    const other = await send(m, payee);
    await run();
    // All due, the failing ones first.
    for (const [i, o] of [...failing, other].entries()) {
      await service.ctx.db
        .updateTable('remit_orders')
        .set({ return_check_at: new Date(Date.now() - 5_000 + i * 1_000) })
        .where('id', '=', o.id)
        .execute();
    }
    const failingIds = new Set(failing.map((o) => o.id));
    const provider = service.ctx.upstreams.remittance;
    const status = provider.status;
    // An answer our own code fails on (a provider's throw is only "no answer", counted as asked).
    provider.status = async (call, id) => {
      if (failingIds.has(id))
        return {
          kind: 'found',
          providerOrderId: 'p',
          get status(): string {
            throw new Error('answer unreadable');
          },
        };
      return status.call(provider, call, id);
    };
    try {
      // One run of the watch (the old one threw at the first failing order; the error is not the point here).
      await returnWatchTicker.run(service.ctx).catch(() => undefined);
    } finally {
      provider.status = status;
    }
    const checksOf = async (id: string) => (await rowById(service, 'remit_orders', id)).return_checks;
    assert.equal(await checksOf(other.id), 1, 'the other order was asked');
    for (const o of failing) assert.equal(await checksOf(o.id), 0, 'a failing one is asked again when its claim ends');
  });

  it(
    'gates: kyc_required, resource_not_found, asset_not_allowed, invalid amounts, insufficient_balance, ' +
      'amount_out_of_range',
    async () => {
      const low = await setup({ kyc: 0 });
      await expectCode(send(low.m, low.payee), 'kyc_required', 400);
      const { m, payee } = await setup();
      // The service-wide requirement (GET /v1/kyc/requirements) gates too, above the corridor's level 1.
      await admin(service, 'PUT', '/admin/v1/kyc/requirements/remittance', {
        environment: 'sandbox',
        min_kyc_level: 2,
      });
      try {
        await expectCode(send(m, payee), 'kyc_required', 400);
      } finally {
        await admin(service, 'PUT', '/admin/v1/kyc/requirements/remittance', {
          environment: 'sandbox',
          min_kyc_level: 1,
        });
      }
      const other = await setup();
      await expectCode(send(m, other.payee), 'resource_not_found', 404);
      await expectCode(send(m, 'pye_999999999'), 'resource_not_found', 404);
      await expectCode(send(m, payee, 'NOPE'), 'asset_not_allowed', 400);
      await expectCode(send(m, payee, 'USDT', '1.1234567'), 'invalid_request', 400);
      await expectCode(send(m, payee, 'USDT', '0'), 'invalid_request', 400);
      await expectCode(send(m, payee, 'USDT', '999'), 'insufficient_balance', 400);
      await expectCode(send(m, payee, 'USDT', '0.5'), 'amount_out_of_range', 400);
      await client.remittance.unlinkPayee(payee, { onBehalfOf: m });
      await expectCode(send(m, payee), 'resource_not_found', 404);
      assert.equal((await balance(m, 'USDT')).available, '1000.000000', 'nothing moved');
    },
  );

  it(
    'a completed KYC profile update stops remittance (kyc_required, ' + 'nothing frozen) until the re-review passes',
    async () => {
      const external = `r-${randomUUID().slice(0, 8)}`;
      const member = await client.members.create({ external_member_id: external });
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createSession({ onBehalfOf: member.id })).id,
        'submitted',
      );
      await client.kyc.sandboxReview(member.id, { decision: 'approved' });
      assert.equal((await client.members.get(member.id)).kyc_level, 1);
      await client.deposits.create({ member_id: external, asset: 'EUR', amount: '100', tx_hash: `t-${randomUUID()}` });
      const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: external });
      assert.equal((await send(external, payee.id, 'EUR', '10')).status, 'pending', 'level 1 opens remittance');
      await client.hostedScreens.sandboxComplete(
        (await client.kyc.createProfileSession({ onBehalfOf: member.id })).id,
        'submitted',
      );
      assert.equal((await client.members.get(member.id)).kyc_level, 0, 'the level falls while the update is reviewed');
      const before = await balance(external, 'EUR');
      const refused = await client.requestRaw({
        method: 'POST',
        path: '/v1/remittances',
        body: { payee_id: payee.id, source_asset: 'EUR', source_amount: '10' },
        onBehalfOf: external,
        idempotencyKey: randomUUID(),
      });
      assert.deepEqual([refused.status, refused.body.code], [400, 'kyc_required']);
      assert.deepEqual(await balance(external, 'EUR'), before, 'nothing frozen by the refusal');
      await client.kyc.sandboxReview(member.id, { decision: 'approved' });
      assert.equal((await send(external, payee.id, 'EUR', '10')).status, 'pending', 'open again after the re-review');
      await run();
    },
  );

  it('creates orders sent at once, of several members, each as if alone (batches of orders)', async () => {
    const [a, b, low] = [await setup(), await setup(), await setup({ kyc: 0 })];
    const create = (s: { m: string; payee: string }, source_asset: string, source_amount: string) =>
      send(s.m, s.payee, source_asset, source_amount).then(
        (order) => ({ order, code: undefined as string | undefined }),
        (err) => ({ order: undefined, code: (err as { code?: string }).code }),
      );
    // a's two orders (300 EUR + 2.50 fee each, of 500) cannot both be paid: whichever is written first is.
    const [a1, a2, b1, b2, l1] = await Promise.all([
      create(a, 'EUR', '300'),
      create(a, 'EUR', '300'),
      create(b, 'EUR', '100'),
      create(b, 'USDT', '100'),
      create(low, 'EUR', '10'),
    ]);
    const paid = [a1, a2].filter((x) => x.order?.status === 'pending');
    assert.equal(paid.length, 1, JSON.stringify([a1, a2]));
    assert.equal([a1, a2].find((x) => !x.order)?.code, 'insufficient_balance');
    assert.deepEqual([paid[0]!.order!.fee, paid[0]!.order!.payout_amount], ['2.50', '300.00']);
    assert.deepEqual([b1.order?.status, b1.order?.fee, b2.order?.status], ['pending', '1.50', 'pending']);
    assert.equal(b2.order?.fee, '1.583250', 'as the same order alone (the success test)');
    assert.equal(l1.code, 'kyc_required');
    const held = async (m: string, asset: string) => {
      const x = await balance(m, asset);
      return [x.available, x.frozen];
    };
    assert.deepEqual(await held(a.m, 'EUR'), ['197.50', '302.50']);
    assert.deepEqual(await held(b.m, 'EUR'), ['398.50', '101.50']);
    assert.deepEqual(await held(b.m, 'USDT'), ['898.416750', '101.583250']);
    assert.deepEqual(await held(low.m, 'EUR'), ['500.00', '0.00'], 'nothing frozen by the refusal');
    const orders = [paid[0]!.order!, b1.order!, b2.order!];
    for (const order of orders) {
      const entries = await service.ctx.db
        .selectFrom('journal_entries')
        .select('kind')
        .where('reference_id', '=', order.id)
        .execute();
      assert.equal(entries.length, 1, 'one freeze');
      assert.deepEqual(await eventsOf(order.id), ['remittance.order.pending@1']);
    }
    const written = await service.ctx.db
      .selectFrom('remit_orders')
      .select(['id', 'value_day', 'corridor_id'])
      .where('member_id', 'in', [(await client.members.get(a.m)).id, (await client.members.get(low.m)).id])
      .execute();
    assert.deepEqual(
      written.map((r) => r.id),
      [paid[0]!.order!.id],
      'no row of a refused order',
    );

    // Two members' orders that the merchant's daily limit cannot both take: the second, whichever, as if alone.
    const { value_day: day, corridor_id: corridor } = written[0]!;
    const { total } = await service.ctx.db
      .selectFrom('remit_orders')
      .select((eb) => eb.fn.sum<string>('payout_amount').as('total'))
      .where('corridor_id', '=', corridor)
      .where('merchant_id', '=', merchantId)
      .where('value_day', '=', day)
      .where('status', '!=', 'failed')
      .executeTakeFirstOrThrow();
    const max = BigInt(total) + 15_000n;
    await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, {
      merchant_daily_max: `${max / 100n}.${String(max % 100n).padStart(2, '0')}`,
    });
    try {
      const [c, d] = [await setup(), await setup()];
      const both = await Promise.all([create(c, 'EUR', '100'), create(d, 'EUR', '100')]);
      assert.deepEqual(both.map((x) => x.order?.status ?? x.code).sort(), ['limit_exceeded', 'pending']);
      const [took, refused] = both[0]!.order ? [c, d] : [d, c];
      assert.deepEqual(await held(took.m, 'EUR'), ['398.50', '101.50']);
      assert.deepEqual(await held(refused.m, 'EUR'), ['500.00', '0.00']);
    } finally {
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, { merchant_daily_max: '1000000.00' });
    }
    await run();
  });

  it('limits: single and daily, member and merchant, with limit_type and limit_scope', async () => {
    const { m, payee } = await setup();
    const corridor = 'rco_de_eur_local_sepa_sbx';
    const limited = async (patch: Record<string, unknown>, amount: string, type: string, scope: string) => {
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, patch);
      const res = await client.requestRaw({
        method: 'POST',
        path: '/v1/remittances',
        body: { payee_id: payee, source_asset: 'EUR', source_amount: amount },
        onBehalfOf: m,
        idempotencyKey: randomUUID(),
      });
      assert.equal(res.body.code, 'limit_exceeded', JSON.stringify(res.body));
      assert.equal(res.body.limit_type, type);
      assert.equal(res.body.limit_scope, scope);
    };
    try {
      await limited({ member_single_max: '50.00' }, '60', 'single', 'member');
      await limited({ member_single_max: '10000.00', merchant_single_max: '40.00' }, '60', 'single', 'merchant');
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, {
        merchant_single_max: '50000.00',
        member_daily_max: '150.00',
      });
      await send(m, payee, 'EUR', '100');
      await limited({}, '60', 'daily', 'member');
      await send(m, payee, 'EUR', '50');
      const second = await setup();
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, {
        member_daily_max: null,
        merchant_daily_max: '200.00',
      });
      const res = await client.requestRaw({
        method: 'POST',
        path: '/v1/remittances',
        body: { payee_id: second.payee, source_asset: 'EUR', source_amount: '60' },
        onBehalfOf: second.m,
        idempotencyKey: randomUUID(),
      });
      assert.deepEqual(
        [res.body.code, res.body.limit_type, res.body.limit_scope],
        ['limit_exceeded', 'daily', 'merchant'],
      );
    } finally {
      await admin(service, 'PATCH', `/admin/v1/remit/corridors/${corridor}`, {
        member_single_max: '10000.00',
        merchant_single_max: '50000.00',
        member_daily_max: '20000.00',
        merchant_daily_max: '1000000.00',
      });
    }
    await run();
  });

  it(
    'a disabled corridor stops orders (corridor_not_supported); lists and reads are scoped; ' + 'the same key replays',
    async () => {
      const { m, payee } = await setup();
      const key = randomUUID();
      const first = await client.remittance.create(
        { payee_id: payee, source_asset: 'USDT', source_amount: '10' },
        { onBehalfOf: m, idempotencyKey: key },
      );
      const replay = await client.remittance.create(
        { payee_id: payee, source_asset: 'USDT', source_amount: '10' },
        { onBehalfOf: m, idempotencyKey: key },
      );
      assert.deepEqual(replay, first);
      assert.equal(first.fee, '1.133250');
      assert.equal((await balance(m, 'USDT')).frozen, '11.133250', 'one freeze');
      const frozenRows = await service.ctx.db
        .selectFrom('remit_orders')
        .select('id')
        .where('member_id', '=', (await client.members.get(m)).id)
        .execute();
      assert.equal(frozenRows.length, 1);
      await admin(service, 'PATCH', '/admin/v1/remit/corridors/rco_de_eur_local_sepa_sbx', { enabled: false });
      try {
        await expectCode(send(m, payee), 'corridor_not_supported', 400);
      } finally {
        await admin(service, 'PATCH', '/admin/v1/remit/corridors/rco_de_eur_local_sepa_sbx', { enabled: true });
      }
      const other = await setup();
      await expectCode(client.remittance.get(first.id, { onBehalfOf: other.m }), 'not_found', 404);
      assert.equal((await client.remittance.get(first.id)).id, first.id, 'the merchant sees every order');
      const mine: string[] = [];
      for await (const o of client.remittance.list({ onBehalfOf: m })) mine.push(o.id);
      assert.deepEqual(mine, [first.id]);
      const pending: string[] = [];
      for await (const o of client.remittance.list({ status: 'pending', limit: 2 })) pending.push(o.id);
      assert.ok(pending.includes(first.id));
      await run();
    },
  );
});
