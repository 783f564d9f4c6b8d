import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { admin, createKey, clientFor, newMerchantClient, useTestService } from './support/service.js';
import { eventsAbout, TRON } from './support/fixtures.js';

/**
 * Issue 41, point 4: balance monitors. `balance_monitor.triggered` once when a posting takes the
 * watched balance below `below`, `balance_monitor.resolved` once when one brings it back, in the
 * posting's transaction; exactly once per crossing under parallel postings (real concurrency on
 * PostgreSQL; the embedded database runs them one at a time, which the same counts hold for).
 */

describe('balance monitors', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({}, (s) => ({ service, client, merchantId } = s));

  const eventsOf = (id: string) =>
    eventsAbout(service, id, ['type', 'status', 'status_version', 'merchant_id', 'object']);
  const deposit = (c: MerchantWalletClient, member: string, amount: string) =>
    c.deposits.create({ member_id: member, asset: 'USDT', amount, tx_hash: `0x${randomUUID().replaceAll('-', '')}` });

  it(
    'custody: triggered once on falling below, resolved once on coming back, ' + 'with the state and the events',
    async () => {
      const { client: c } = await newMerchantClient(service);
      const external = `bm-${randomUUID().slice(0, 8)}`;
      await c.members.create({ external_member_id: external });
      const m = await c.balanceMonitors.create({ balance: 'custody', asset: 'usdt', below: '100' });
      assert.match(m.id, /^bmn_[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...m, id: undefined },
        { id: undefined, balance: 'custody', asset: 'USDT', below: '100.000000', state: 'triggered' },
        'nothing held yet',
      );
      assert.deepEqual(await eventsOf(m.id), [], 'no event at creation');
      await deposit(c, external, '150');
      await deposit(c, external, '10');
      const w = await c.withdrawals.create(
        { asset: 'USDT', network: 'TRON', address: TRON, amount: '69' },
        { onBehalfOf: external },
      );
      assert.equal((await eventsOf(m.id)).length, 1, 'locking moves no custody');
      await c.withdrawals.confirm(w.id); // 160 - 70 = 90
      await deposit(c, external, '9.999999'); // 99.999999: still below
      await deposit(c, external, '0.000001'); // 100: back at it
      const events = await eventsOf(m.id);
      assert.deepEqual(
        events.map((e) => [e.type, e.status, e.status_version]),
        [
          ['balance_monitor.resolved', 'ok', 1],
          ['balance_monitor.triggered', 'triggered', 2],
          ['balance_monitor.resolved', 'ok', 3],
        ],
      );
      assert.ok(events.every((e) => e.object === 'balance_monitor'));
      const listed = [];
      for await (const x of c.balanceMonitors.list()) listed.push(x);
      assert.deepEqual(listed, [{ ...m, state: 'ok' }]);
    },
  );

  it("prepaid: the operator's credit resolves it; deleted, it writes nothing more", async () => {
    const { client: c, merchantId: mid } = await newMerchantClient(service);
    const m = await c.balanceMonitors.create({ balance: 'prepaid', asset: 'USDT', below: '10' });
    assert.equal(m.state, 'triggered');
    const credit = await admin(service, 'POST', `/admin/v1/merchants/${mid}/prepaid-credits`, {
      environment: 'sandbox',
      asset: 'USDT',
      amount: '20',
    });
    assert.equal(credit.status, 201);
    assert.deepEqual(
      (await eventsOf(m.id)).map((e) => e.type),
      ['balance_monitor.resolved'],
    );
    const ok = await c.balanceMonitors.create({ balance: 'prepaid', asset: 'USDT', below: '10' });
    assert.equal(ok.state, 'ok', "the state at creation is the current balance's");
    assert.deepEqual(await c.balanceMonitors.delete(m.id), { id: m.id, deleted: true });
    await expectCode(c.balanceMonitors.delete(m.id), 'not_found', 404);
    await admin(service, 'POST', `/admin/v1/merchants/${mid}/prepaid-credits`, {
      environment: 'sandbox',
      asset: 'USDT',
      amount: '20',
    });
    assert.equal((await eventsOf(m.id)).length, 1);
  });

  it('refuses a bad body, and another merchant or environment cannot remove a monitor', async () => {
    await expectCode(
      client.balanceMonitors.create({ balance: 'custody', asset: 'USDT', below: '0' }),
      'invalid_request',
      400,
    );
    await expectCode(
      client.balanceMonitors.create({ balance: 'custody', asset: 'USDT', below: '1.0000001' }),
      'invalid_request',
      400,
    );
    await expectCode(
      client.balanceMonitors.create({ balance: 'custody', asset: 'NOPE', below: '1' }),
      'asset_not_allowed',
    );
    await expectCode(
      client.balanceMonitors.create({ balance: 'fee_income' as 'custody', asset: 'USDT', below: '1' }),
      'invalid_request',
      400,
    );
    const m = await client.balanceMonitors.create({ balance: 'custody', asset: 'USDT', below: '1' });
    const { client: other } = await newMerchantClient(service);
    await expectCode(other.balanceMonitors.delete(m.id), 'not_found', 404);
    const prod = await createKey(service, merchantId, { environment: 'production' });
    await expectCode(clientFor(service, prod).balanceMonitors.delete(m.id), 'not_found', 404);
    for await (const x of other.balanceMonitors.list()) assert.fail(`another merchant lists ${x.id}`);
    await client.balanceMonitors.delete(m.id);
  });

  it('parallel postings across the threshold write exactly one triggered and one resolved', async () => {
    const { client: c } = await newMerchantClient(service, {});
    const members = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const external = `bmp-${i}-${randomUUID().slice(0, 8)}`;
        await c.members.create({ external_member_id: external });
        await deposit(c, external, '250');
        return external;
      }),
    );
    // Custody 1,000; below 500: 16 confirmations of 41 (40 + the TRON fee) take it to 344, crossing once.
    const m = await c.balanceMonitors.create({ balance: 'custody', asset: 'USDT', below: '500' });
    assert.equal(m.state, 'ok');
    const withdrawals = [];
    for (const external of [...members, ...members, ...members, ...members]) {
      withdrawals.push(
        await c.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address: TRON, amount: '40' },
          { onBehalfOf: external },
        ),
      );
    }
    await Promise.all(withdrawals.map((w) => c.withdrawals.confirm(w.id)));
    // Then 16 deposits of 20 at once: 664, back above once.
    await Promise.all([...members, ...members, ...members, ...members].map((external) => deposit(c, external, '20')));
    const events = await eventsOf(m.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.status_version]),
      [
        ['balance_monitor.triggered', 1],
        ['balance_monitor.resolved', 2],
      ],
    );
    const custody = (await c.merchant.balances()).find((b) => b.asset === 'USDT')!.custody;
    assert.equal(custody, '664.000000');
    const listed = [];
    for await (const x of c.balanceMonitors.list()) listed.push(x.state);
    assert.deepEqual(listed, ['ok']);
  });
});
