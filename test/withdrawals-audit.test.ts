import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import {
  adjustCustody,
  balanceOf,
  custodyOf,
  fundedMember,
  entryKinds,
  eventsAbout,
  TRON,
  merchantWithMember,
} from './support/fixtures.js';
import { expectCode } from './support/expect.js';
import { admin, clientFor, createKey, newMerchantClient, useTestService } from './support/service.js';

/**
 * Withdrawals against the reference (merchant-wallet-api.md "Withdrawal" states, "POST
 * /v1/withdrawals/{id}/confirm", Errors; extensions.md section 4): the rules the other files
 * (money-flows, step-up, concurrency-audit, webhooks) do not already drive.
 */
const BTC_ADDR = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

describe('withdrawals: conformance audit', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  const create = (client: MerchantWalletClient, member: string, amount = '10') =>
    client.withdrawals.create(
      { asset: 'USDT', network: 'TRON', address: TRON, amount },
      { onBehalfOf: member },
    ) as Promise<any>;
  const eventsOf = (id: string) =>
    eventsAbout(service, id, ['type', 'object', 'external_member_id', 'status', 'status_version']);
  const entriesOf = (id: string) => entryKinds(service, id);

  it('lists by status: only locked, settled or failed are filters; any other value is invalid_request', async () => {
    const { client, m } = await merchantWithMember(service);
    const locked = await create(client, m.external);
    const settled = await create(client, m.external);
    const failed = await create(client, m.external);
    await client.withdrawals.confirm(settled.id);
    await client.withdrawals.fail(failed.id);
    for (const [status, id] of [
      ['locked', locked.id],
      ['settled', settled.id],
      ['failed', failed.id],
    ] as const) {
      const page = await client.request<any>({ method: 'GET', path: '/v1/withdrawals', query: { status } });
      assert.deepEqual(
        page.data.map((w: any) => w.id),
        [id],
        `status=${status} as the merchant`,
      );
      assert.ok(page.data.every((w: any) => w.status === status));
      const own = await client.request<any>({
        method: 'GET',
        path: '/v1/withdrawals',
        query: { status },
        onBehalfOf: m.external,
      });
      assert.deepEqual(
        own.data.map((w: any) => w.id),
        [id],
        `status=${status} on behalf of the member`,
      );
    }
    for (const bad of ['bogus', 'LOCKED', 'pending']) {
      await expectCode(
        client.request({ method: 'GET', path: '/v1/withdrawals', query: { status: bad } }),
        'invalid_request',
        400,
      );
    }
  });

  it(
    'refuses an amount below the network minimum with amount_out_of_range and locks nothing; the minimum ' +
      'itself passes',
    async () => {
      const { client, m } = await merchantWithMember(service);
      // TRON USDT: minimum 1, fee 1 (default catalogue).
      await expectCode(create(client, m.external, '0.999999'), 'amount_out_of_range', 400);
      await expectCode(create(client, m.external, '0'), 'invalid_request', 400);
      assert.deepEqual(
        [(await balanceOf(client, m.external)).available, (await balanceOf(client, m.external)).withdrawing],
        ['100.000000', '0.000000'],
      );
      const w = await create(client, m.external, '1');
      assert.equal(w.amount, '1.000000');
      assert.equal((await balanceOf(client, m.external)).withdrawing, '2.000000', 'amount plus fee');
    },
  );

  it("shows the withdrawal at the asset's scale (BTC: 8 places) with the fields of the contract", async () => {
    const { client, m } = await merchantWithMember(service, '1', 'BTC');
    const w = (await client.withdrawals.create(
      { asset: 'btc', network: 'bitcoin', address: BTC_ADDR, amount: '0.1' },
      { onBehalfOf: m.external },
    )) as any;
    assert.match(w.id, /^wdr_[0-9a-f-]{36}$/);
    assert.equal(w.status, 'locked');
    assert.equal(w.asset, 'BTC');
    assert.equal(w.network, 'BITCOIN');
    assert.equal(w.address, BTC_ADDR);
    assert.equal(w.amount, '0.10000000');
    assert.match(w.fee, /^\d+\.\d{8}$/);
    assert.match(w.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const read = (await client.withdrawals.get(w.id.slice(4), { onBehalfOf: m.external })) as any;
    assert.deepEqual(read, w, 'GET (prefix optional) answers the same object');
    const bal = await balanceOf(client, m.external, 'BTC');
    const minor = (text: string) => BigInt(text.replace('.', ''));
    assert.match(bal.withdrawing, /^\d+\.\d{8}$/);
    assert.equal(minor(bal.withdrawing), minor(w.amount) + minor(w.fee), 'amount plus fee, at 8 places');
  });

  it('confirm acts as the merchant: x-on-behalf-of is refused and nothing moves', async () => {
    const { client, m } = await merchantWithMember(service);
    const w = await create(client, m.external);
    for (const action of ['confirm', 'fail']) {
      await expectCode(
        client.request({ method: 'POST', path: `/v1/withdrawals/${w.id}/${action}`, onBehalfOf: m.external }),
        'invalid_request',
        400,
      );
    }
    assert.equal(((await client.withdrawals.get(w.id)) as any).status, 'locked');
    assert.deepEqual(await entriesOf(w.id), ['withdrawal.lock']);
  });

  it(
    'a custody shortfall is replayed under the same key; after the missed deposit is reported a new key ' +
      'settles, custody may reach exactly zero',
    async () => {
      const { client, merchantId, m } = await merchantWithMember(service);
      const w = await create(client, m.external, '49'); // 49 + fee 1 = 50
      const adj = await adjustCustody(service, merchantId, 'decrease', '60', 'moved off platform');
      assert.equal(adj.status, 201);
      assert.equal((await custodyOf(client)).custody, '40.000000');
      const key = randomUUID();
      const first = await client.requestRaw({
        method: 'POST',
        path: `/v1/withdrawals/${w.id}/confirm`,
        idempotencyKey: key,
      });
      assert.equal(first.status, 400);
      assert.equal((first.body as any).code, 'merchant_custody_shortfall');
      assert.equal((first.body as any).type, 'invalid_request_error');
      // The missed deposit is reported: custody 50, exactly amount plus fee.
      const other = await fundedMember(client, '10');
      assert.equal((await custodyOf(client)).custody, '50.000000');
      const replay = await client.requestRaw({
        method: 'POST',
        path: `/v1/withdrawals/${w.id}/confirm`,
        idempotencyKey: key,
      });
      assert.equal(replay.status, 400, 'same key: the first failure is replayed');
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      assert.equal((replay.body as any).code, 'merchant_custody_shortfall');
      assert.equal(((await client.withdrawals.get(w.id)) as any).status, 'locked');
      const settled = await client.withdrawals.confirm(w.id, { idempotencyKey: randomUUID() });
      assert.deepEqual(settled, { id: w.id, status: 'settled', replayed: false });
      assert.equal((await custodyOf(client)).custody, '0.000000');
      const bal = await balanceOf(client, m.external);
      assert.deepEqual([bal.available, bal.withdrawing, bal.total], ['50.000000', '0.000000', '50.000000']);
      assert.equal((await balanceOf(client, other.external)).available, '10.000000');
    },
  );

  it(
    'each transition posts once and records one event with ids and status only; ' + 'replays and refusals add neither',
    async () => {
      const { client, m } = await merchantWithMember(service);
      const toFail = await create(client, m.external, '20');
      const toSettle = await create(client, m.external, '30');
      const failKey = randomUUID();
      const failed = (await client.withdrawals.fail(toFail.id, { idempotencyKey: failKey })) as any;
      assert.deepEqual(
        { status: failed.status, status_version: failed.status_version, amount: failed.amount, fee: failed.fee },
        { status: 'failed', status_version: 2, amount: '20.000000', fee: '1.000000' },
      );
      const sameKey = await client.requestRaw({
        method: 'POST',
        path: `/v1/withdrawals/${toFail.id}/fail`,
        idempotencyKey: failKey,
      });
      assert.equal(sameKey.headers['x-idempotent-replay'], 'true');
      assert.equal(
        ((await client.withdrawals.fail(toFail.id)) as any).status,
        'failed',
        'a repeat on failed replays 200',
      );
      await expectCode(client.withdrawals.confirm(toFail.id), 'order_not_cancellable', 400);
      await client.withdrawals.confirm(toSettle.id);
      await client.withdrawals.confirm(toSettle.id);
      await expectCode(client.withdrawals.fail(toSettle.id), 'order_not_cancellable', 400);
      assert.deepEqual(await entriesOf(toFail.id), ['withdrawal.fail', 'withdrawal.lock']);
      assert.deepEqual(await entriesOf(toSettle.id), ['withdrawal.confirm', 'withdrawal.lock']);
      assert.deepEqual(await eventsOf(toFail.id), [
        {
          type: 'withdrawal.locked',
          object: 'withdrawal',
          external_member_id: m.external,
          status: 'locked',
          status_version: 1,
        },
        {
          type: 'withdrawal.failed',
          object: 'withdrawal',
          external_member_id: m.external,
          status: 'failed',
          status_version: 2,
        },
      ]);
      assert.deepEqual(await eventsOf(toSettle.id), [
        {
          type: 'withdrawal.locked',
          object: 'withdrawal',
          external_member_id: m.external,
          status: 'locked',
          status_version: 1,
        },
        {
          type: 'withdrawal.settled',
          object: 'withdrawal',
          external_member_id: m.external,
          status: 'settled',
          status_version: 2,
        },
      ]);
      const bal = await balanceOf(client, m.external);
      assert.deepEqual([bal.available, bal.withdrawing], ['69.000000', '0.000000']);
      assert.equal((await custodyOf(client)).custody, '69.000000');
    },
  );

  it(
    'a withdrawal locked before its member was suspended can still be confirmed or failed by the ' + 'merchant',
    async () => {
      const { client, m } = await merchantWithMember(service);
      const a = await create(client, m.external, '10');
      const b = await create(client, m.external, '10');
      await client.members.suspend(m.external);
      await expectCode(client.withdrawals.get(a.id, { onBehalfOf: m.external }), 'member_not_found', 404);
      assert.equal(((await client.withdrawals.confirm(a.id)) as any).status, 'settled');
      assert.equal(((await client.withdrawals.fail(b.id)) as any).status, 'failed');
      assert.equal((await custodyOf(client)).custody, '89.000000');
    },
  );

  it('a withdrawal locked before its asset was disabled can still be read, confirmed and failed', async () => {
    const { client, m } = await merchantWithMember(service, '100', 'USDC');
    const w1 = (await client.withdrawals.create(
      { asset: 'USDC', network: 'ETHEREUM', address: '0x52908400098527886E0F7030069857D2E4169EE7', amount: '20' },
      { onBehalfOf: m.external },
    )) as any;
    const w2 = (await client.withdrawals.create(
      { asset: 'USDC', network: 'ETHEREUM', address: '0x52908400098527886E0F7030069857D2E4169EE7', amount: '20' },
      { onBehalfOf: m.external },
    )) as any;
    const off = await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: false });
    try {
      assert.equal(off.status, 200, JSON.stringify(off.body));
      await expectCode(
        client.withdrawals.create(
          { asset: 'USDC', network: 'ETHEREUM', address: '0x52908400098527886E0F7030069857D2E4169EE7', amount: '20' },
          { onBehalfOf: m.external },
        ),
        'asset_not_allowed',
        400,
      );
      assert.equal(((await client.withdrawals.get(w1.id)) as any).amount, w1.amount);
      assert.equal(((await client.withdrawals.confirm(w1.id)) as any).status, 'settled');
      assert.equal(((await client.withdrawals.fail(w2.id)) as any).status, 'failed');
    } finally {
      await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: true });
    }
  });
  it(
    'scopes: withdrawals:write creates, confirms and fails; withdrawals:read only reads; neither gives 403 ' +
      'insufficient_scope',
    async () => {
      const { client, merchantId, m } = await merchantWithMember(service);
      const w = await create(client, m.external);
      const reader = clientFor(service, await createKey(service, merchantId, { scopes: ['withdrawals:read'] }));
      const outsider = clientFor(service, await createKey(service, merchantId, { scopes: ['members:write'] }));
      assert.equal(((await reader.withdrawals.get(w.id)) as any).status, 'locked');
      assert.equal(
        (await reader.request<any>({ method: 'GET', path: '/v1/withdrawals', onBehalfOf: m.external })).data.length,
        1,
      );
      await expectCode(reader.withdrawals.confirm(w.id), 'insufficient_scope', 403);
      await expectCode(reader.withdrawals.fail(w.id), 'insufficient_scope', 403);
      await expectCode(
        reader.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address: TRON, amount: '5' },
          { onBehalfOf: m.external },
        ),
        'insufficient_scope',
        403,
      );
      await expectCode(outsider.withdrawals.get(w.id), 'insufficient_scope', 403);
      await expectCode(outsider.request({ method: 'GET', path: '/v1/withdrawals' }), 'insufficient_scope', 403);
      assert.equal(((await client.withdrawals.get(w.id)) as any).status, 'locked', 'nothing moved');
    },
  );

  it(
    "refuses a withdrawal to a deposit address the service issued to another merchant (the service's own " + 'address)',
    async () => {
      const issuer = await newMerchantClient(service);
      const issued = (await issuer.client.merchant.requestDepositAddress({ asset: 'USDT', network: 'TRON' })) as any;
      const { client, m } = await merchantWithMember(service);
      await expectCode(
        client.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address: issued.address, amount: '10' },
          { onBehalfOf: m.external },
        ),
        'address_not_allowed',
        400,
      );
      assert.equal((await balanceOf(client, m.external)).withdrawing, '0.000000');
    },
  );
  it(
    "refuses an address that has the network's shape but a wrong checksum (malformed): TRON base58check, " +
      'Bitcoin base58check and bech32/bech32m',
    async () => {
      const { client, m } = await merchantWithMember(service);
      const b = await fundedMember(client, '1', 'BTC');
      const tron = (address: string) =>
        client.withdrawals.create(
          { asset: 'USDT', network: 'TRON', address, amount: '10' },
          { onBehalfOf: m.external },
        );
      const btc = (address: string) =>
        client.withdrawals.create(
          { asset: 'BTC', network: 'BITCOIN', address, amount: '0.001' },
          { onBehalfOf: b.external },
        );
      // One character changed: still the pattern's shape, no longer an address.
      await expectCode(tron('TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMX'), 'address_not_allowed', 400);
      await expectCode(tron('TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMw'), 'address_not_allowed', 400);
      await expectCode(btc('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdp'), 'address_not_allowed', 400);
      await expectCode(btc('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb'), 'address_not_allowed', 400);
      // BIP-350: version 0 needs bech32, version 1 bech32m; the other checksum is refused.
      await expectCode(btc('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh'), 'address_not_allowed', 400);
      await expectCode(
        btc('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd'),
        'address_not_allowed',
        400,
      );
      assert.equal((await balanceOf(client, m.external)).withdrawing, '0.000000', 'nothing was locked');
      assert.equal((await balanceOf(client, b.external, 'BTC')).withdrawing, '0.00000000');
      assert.equal(((await tron(TRON)) as any).status, 'locked');
      for (const address of [
        BTC_ADDR,
        'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
        'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
        '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa',
        '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
      ]) {
        assert.equal(((await btc(address)) as any).status, 'locked', address);
      }
    },
  );
  it(
    'refuses a mixed-case Ethereum address whose letters break its EIP-55 checksum; one-case and correctly ' +
      'checksummed addresses pass',
    async () => {
      const { client, m } = await merchantWithMember(service);
      const eth = (address: string) =>
        client.withdrawals.create(
          { asset: 'USDT', network: 'ETHEREUM', address, amount: '10' },
          { onBehalfOf: m.external },
        );
      // EIP-55's own examples with one letter's case flipped.
      await expectCode(eth('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), 'address_not_allowed', 400);
      await expectCode(eth('0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'), 'address_not_allowed', 400);
      assert.equal((await balanceOf(client, m.external)).withdrawing, '0.000000', 'nothing was locked');
      for (const address of [
        '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
        '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
        '0xde709f2102306220921060314715629080e2fb77',
        '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      ]) {
        assert.equal(((await eth(address)) as any).status, 'locked', address);
      }
    },
  );
});
