import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MerchantWalletError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { admin, clientFor, createKey, createMerchant, newMerchantClient, useTestService } from './support/service.js';
import {
  adjustCustody,
  availableOnly,
  balanceOf,
  custodyOf,
  fundedMember,
  TRON,
  merchantWithMember,
} from './support/fixtures.js';

const ETH_ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';

describe('deposits, balances and withdrawals', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  /** A USDT deposit address of the merchant's own on `network` (a withdrawal to it is refused). */
  const ownDepositAddress = (merchantId: string, network: string, address: string) =>
    service.ctx.db
      .insertInto('deposit_addresses')
      .values({
        id: `dad_${randomUUID()}`,
        merchant_id: merchantId,
        environment: 'sandbox',
        asset: 'USDT',
        network,
        address,
      })
      .execute();
  /** A withdrawal of `amount` USDT on TRON by member `m` (its record). */
  const withdraw = async (client: MerchantWalletClient, m: { external: string }, amount: string) =>
    (await client.withdrawals.create(
      { asset: 'USDT', network: 'TRON', address: TRON, amount },
      { onBehalfOf: m.external },
    )) as any;
  /** An address put on the operator's blacklist (sanctions). */
  const blacklist = (network: string, address: string) =>
    admin(service, 'POST', '/admin/v1/address-blacklist', { network, address, reason: 'sanctions' });

  it('credits a deposit to the member available balance and the merchant custody in one go', async () => {
    const { client } = await newMerchantClient(service);
    const member = (await client.members.create({ external_member_id: 'dep-1' })) as any;
    const dep = (await client.deposits.create({
      member_id: member.id,
      asset: 'usdt',
      amount: '12.5',
      tx_hash: '0xabc',
    })) as any;
    assert.match(dep.id, /^dep_[0-9a-f-]{36}$/);
    assert.equal(dep.status, 'credited');
    assert.equal(dep.amount, '12.500000');
    assert.equal(dep.member_id, member.id);
    const bal = await balanceOf(client, 'dep-1');
    assert.deepEqual(bal, availableOnly('USDT', '12.500000'));
    assert.deepEqual(await custodyOf(client), { asset: 'USDT', custody: '12.500000', prepaid_available: '0.000000' });
  });

  it(
    'refuses a second report of the same tx_hash and asset with a new key, ' + 'and replays with the same key',
    async () => {
      const { client } = await newMerchantClient(service);
      await client.members.create({ external_member_id: 'dup-dep' });
      const key = randomUUID();
      const body = { member_id: 'dup-dep', asset: 'USDT', amount: '1', tx_hash: '0xsame' };
      const first = await client.requestRaw({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: key });
      assert.equal(first.status, 201);
      const replay = await client.requestRaw({ method: 'POST', path: '/v1/deposits', body, idempotencyKey: key });
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      await expectCode(client.deposits.create(body), 'duplicate_resource', 409);
      const other = await client.deposits.create({ ...body, asset: 'USDC' });
      assert.equal((other as any).asset, 'USDC', 'the same hash for another asset is another deposit');
      assert.equal((await balanceOf(client, 'dup-dep')).available, '1.000000');
    },
  );

  it(
    'a hex transaction hash is one transaction in any letter case: the second report is duplicate_resource, ' +
      'not a second credit',
    async () => {
      const { client } = await newMerchantClient(service);
      await client.members.create({ external_member_id: 'case-dep' });
      const hex = randomUUID().replace(/-/g, '').repeat(2);
      const first = (await client.deposits.create({
        member_id: 'case-dep',
        asset: 'USDT',
        amount: '3',
        tx_hash: `0x${hex}`,
      })) as any;
      assert.equal(first.tx_hash, `0x${hex}`, 'kept as sent');
      await expectCode(
        client.deposits.create({
          member_id: 'case-dep',
          asset: 'USDT',
          amount: '3',
          tx_hash: `0x${hex.toUpperCase()}`,
        }),
        'duplicate_resource',
        409,
      );
      // With or without the 0x prefix: one transaction.
      await expectCode(
        client.deposits.create({ member_id: 'case-dep', asset: 'USDT', amount: '3', tx_hash: hex }),
        'duplicate_resource',
        409,
      );
      await expectCode(
        client.deposits.create({ member_id: 'case-dep', asset: 'USDT', amount: '3', tx_hash: `0X${hex}` }),
        'duplicate_resource',
        409,
      );
      // A Bitcoin-style id (64 hex digits, no prefix) too; in a batch of deposits sent together as well.
      const btc = randomUUID().replace(/-/g, '').repeat(2).toUpperCase();
      const together = await Promise.all(
        [btc, `0x${btc.toLowerCase()}`].map((tx_hash) =>
          client.requestRaw({
            method: 'POST',
            path: '/v1/deposits',
            body: { member_id: 'case-dep', asset: 'USDT', amount: '2', tx_hash },
          }),
        ),
      );
      assert.deepEqual(together.map((r) => r.status).sort(), [201, 409]);
      // Other forms (base58, or anything not 64 hex digits) stay exact: case is part of them.
      await client.deposits.create({ member_id: 'case-dep', asset: 'USDT', amount: '1', tx_hash: '5VfYkR' });
      await client.deposits.create({ member_id: 'case-dep', asset: 'USDT', amount: '1', tx_hash: '5vfykr' });
      assert.equal((await balanceOf(client, 'case-dep')).available, '7.000000');
    },
  );

  it('rejects, never rounds, amounts with too many places; accepts trailing zeros', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'places' });
    for (const bad of ['1.0000001', '-1', '1e3', ' 1', '0x10', '', '1.', '.5', '0']) {
      await expectCode(
        client.deposits.create({ member_id: 'places', asset: 'USDT', amount: bad, tx_hash: `b${bad}` }),
        'invalid_request',
      );
    }
    await expectCode(
      client.request({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: 'places', asset: 'USDT', amount: 5, tx_hash: 'num' },
      }),
      'invalid_request',
    );
    // Each asset at its own scale: zeros past it are dropped, its smallest unit and its widest amount kept.
    for (const [asset, amount, stored, tx_hash] of [
      ['USDT', '2.500000000', '2.500000', 'c'],
      ['BTC', '0.00000001', '0.00000001', 'd'],
      ['ETH', '123456789.123456789012345678', '123456789.123456789012345678', 'e'],
    ]) {
      const deposit = (await client.deposits.create({ member_id: 'places', asset, amount, tx_hash })) as any;
      assert.equal(deposit.amount, stored, asset);
    }
  });

  it('refuses an unknown asset or network, and an unknown or suspended member', async () => {
    const { client } = await newMerchantClient(service);
    await client.members.create({ external_member_id: 'gone' });
    await expectCode(
      client.deposits.create({ member_id: 'gone', asset: 'DOGE', amount: '1', tx_hash: 'x' }),
      'asset_not_allowed',
    );
    await expectCode(
      client.deposits.create({ member_id: 'gone', asset: 'USDT', network: 'SOLANA', amount: '1', tx_hash: 'x' }),
      'asset_not_allowed',
    );
    await expectCode(
      client.deposits.create({ member_id: 'nobody', asset: 'USDT', amount: '1', tx_hash: 'x' }),
      'member_not_found',
      404,
    );
    const suspended = await client.members.suspend('gone');
    assert.deepEqual(suspended, { id: (suspended as any).id, status: 'suspended' });
    await expectCode(
      client.deposits.create({ member_id: 'gone', asset: 'USDT', amount: '1', tx_hash: 'y' }),
      'member_not_found',
      404,
    );
    await expectCode(client.balances.list({ onBehalfOf: 'gone' }), 'member_not_found', 404);
    const read = (await client.members.get('gone')) as any;
    assert.equal(read.status, 'suspended');
  });

  it('needs deposits:write, which waits for approval in production', async () => {
    const merchantId = await createMerchant(service);
    const creds = await createKey(service, merchantId, {
      environment: 'production',
      scopes: ['members:write', 'deposits:write'],
    });
    const client = clientFor(service, creds);
    await client.members.create({ external_member_id: 'p1' });
    await expectCode(
      client.deposits.create({ member_id: 'p1', asset: 'USDT', amount: '1', tx_hash: 'p' }),
      'insufficient_scope',
      403,
    );
    await admin(service, 'POST', `/admin/v1/api-keys/${creds.keyId}/approve`, {});
    const dep = (await client.deposits.create({ member_id: 'p1', asset: 'USDT', amount: '1', tx_hash: 'p' })) as any;
    assert.equal(dep.status, 'credited');
  });

  it('asks for the member context on member endpoints', async () => {
    const { client } = await newMerchantClient(service);
    await expectCode(client.request({ method: 'GET', path: '/v1/balances' }), 'member_context_required', 400);
    await expectCode(
      client.request({ method: 'GET', path: '/v1/balances', onBehalfOf: '   ' }),
      'member_context_required',
      400,
    );
    await expectCode(
      client.request({ method: 'GET', path: '/v1/balances', onBehalfOf: 'someone@example.com' }),
      'member_not_found',
      404,
    );
  });

  it('credits prepaid through the operator and shows it in merchant balances', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const res = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
      environment: 'sandbox',
      asset: 'USD',
      amount: '250.00',
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { asset: 'USD', prepaid_available: '250.00' });
    assert.deepEqual(await custodyOf(client, 'USD'), { asset: 'USD', custody: '0.00', prepaid_available: '250.00' });
    const prod = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
      environment: 'production',
      asset: 'USD',
      amount: '1.001',
    });
    assert.equal(prod.body.code, 'invalid_request');
  });

  it('creates a withdrawal: amount plus the catalogue fee move from available to withdrawing', async () => {
    const { client, m } = await merchantWithMember(service);
    const w = await withdraw(client, m, '40');
    assert.match(w.id, /^wdr_/);
    assert.equal(w.status, 'locked');
    assert.equal(w.amount, '40.000000');
    assert.equal(w.fee, '1.000000');
    const bal = await balanceOf(client, m.external);
    assert.equal(bal.available, '59.000000');
    assert.equal(bal.withdrawing, '41.000000');
    assert.equal(bal.total, '100.000000');
    await expectCode(withdraw(client, m, '59'), 'insufficient_balance', 400);
    const max = await withdraw(client, m, '58');
    assert.equal(max.status, 'locked');
    assert.equal((await balanceOf(client, m.external)).available, '0.000000');
  });

  it('refuses malformed, wrong-chain, blacklisted and own deposit addresses', async () => {
    const { client, merchantId, m } = await merchantWithMember(service, '100.000000');
    const create = (network: string, address: string) =>
      client.withdrawals.create({ asset: 'USDT', network, address, amount: '20' }, { onBehalfOf: m.external });
    await expectCode(create('TRON', 'not-an-address'), 'address_not_allowed');
    await expectCode(create('TRON', ETH_ADDR), 'address_not_allowed');
    await expectCode(create('ETHEREUM', TRON), 'address_not_allowed');
    const blocked = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
    await blacklist('TRON', blocked);
    await expectCode(create('TRON', blocked), 'address_not_allowed');
    const ours = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
    await ownDepositAddress(merchantId, 'TRON', ours);
    await expectCode(create('TRON', ours), 'address_not_allowed');
    await expectCode(create('BITCOIN', TRON), 'asset_not_allowed');
    const ok = (await create('ETHEREUM', ETH_ADDR)) as any;
    assert.equal(ok.fee, '5.000000');
  });

  it(
    'refuses a blacklisted or own deposit hex address written in another letter case (EIP-55 checksum case is ' +
      'the same account)',
    async () => {
      const { client, merchantId, m } = await merchantWithMember(service, '100.000000');
      const create = (address: string) =>
        client.withdrawals.create(
          { asset: 'USDT', network: 'ETHEREUM', address, amount: '20' },
          { onBehalfOf: m.external },
        );
      const blocked = '0x8ba1f109551bd432803012645ac136ddd64dba72';
      await blacklist('ETHEREUM', blocked);
      await expectCode(create('0x8ba1f109551bD432803012645Ac136ddd64DBA72'), 'address_not_allowed');
      await expectCode(create(`0x${blocked.slice(2).toUpperCase()}`), 'address_not_allowed');
      const ours = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
      await ownDepositAddress(merchantId, 'ETHEREUM', ours);
      await expectCode(create('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'), 'address_not_allowed');
      assert.equal((await balanceOf(client, m.external)).available, '100.000000', 'nothing was locked');
      const checksummedBlock = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
      await admin(service, 'POST', '/admin/v1/address-blacklist', { network: 'ETHEREUM', address: checksummedBlock });
      await expectCode(create(checksummedBlock.toLowerCase()), 'address_not_allowed');
      const removed = await admin(
        service,
        'DELETE',
        `/admin/v1/address-blacklist/ETHEREUM/${blocked.toUpperCase().replace('0X', '0x')}`,
      );
      assert.equal(removed.status, 200);
      assert.equal(((await create(blocked)) as any).status, 'locked', 'unlisted in any letter case');
    },
  );

  it("documents every refusal of a withdrawal creation, the high-value gate's kyc_required included", async () => {
    const doc = (await (await fetch(`${service.publicUrl}/v1/openapi.json`)).json()) as any;
    const listed = doc.paths['/v1/withdrawals'].post.responses['400']['x-error-codes'];
    for (const code of [
      'asset_not_allowed',
      'address_not_allowed',
      'insufficient_balance',
      'amount_out_of_range',
      'kyc_required',
      'step_up_required',
    ]) {
      assert.ok(listed.includes(code), `POST /v1/withdrawals lists ${code}`);
    }
  });

  it('confirms once: custody shrinks by amount plus fee, withdrawing is cleared, a repeat replays', async () => {
    const { client, m } = await merchantWithMember(service);
    const w = await withdraw(client, m, '40');
    const confirmed = await client.withdrawals.confirm(w.id.replace(/^wdr_/, ''));
    assert.deepEqual(confirmed, { id: w.id, status: 'settled', replayed: false });
    const bal = await balanceOf(client, m.external);
    assert.equal(bal.withdrawing, '0.000000');
    assert.equal(bal.available, '59.000000');
    assert.equal((await custodyOf(client)).custody, '59.000000');
    const again = await client.withdrawals.confirm(w.id);
    assert.deepEqual(again, { id: w.id, status: 'settled', replayed: true });
    assert.equal((await custodyOf(client)).custody, '59.000000', 'no second posting');
    await expectCode(client.withdrawals.fail(w.id), 'order_not_cancellable', 400);
    const read = (await client.withdrawals.get(w.id, { onBehalfOf: m.external })) as any;
    assert.equal(read.status, 'settled');
    assert.equal(read.status_version, 2);
  });

  it('fails a locked withdrawal back to available; a repeat answers 200; confirm is then refused', async () => {
    const { client, m } = await merchantWithMember(service, '10');
    const w = await withdraw(client, m, '5');
    const failed = (await client.withdrawals.fail(w.id)) as any;
    assert.equal(failed.status, 'failed');
    assert.equal((await balanceOf(client, m.external)).available, '10.000000');
    const again = (await client.withdrawals.fail(w.id)) as any;
    assert.equal(again.status, 'failed');
    assert.equal((await balanceOf(client, m.external)).available, '10.000000');
    await expectCode(client.withdrawals.confirm(w.id), 'order_not_cancellable', 400);
  });

  it('refuses a confirm that would make custody negative', async () => {
    const { client, merchantId, m } = await merchantWithMember(service);
    const w = await withdraw(client, m, '50');
    const adj = await adjustCustody(service, merchantId, 'decrease', '80', 'moved off platform');
    assert.equal(adj.status, 201);
    await expectCode(client.withdrawals.confirm(w.id), 'merchant_custody_shortfall', 400);
    const read = (await client.withdrawals.get(w.id)) as any;
    assert.equal(read.status, 'locked', 'nothing moved');
    assert.equal((await custodyOf(client)).custody, '20.000000');
  });

  it('shows a member only its own withdrawals, and another merchant none', async () => {
    const { client } = await newMerchantClient(service);
    const other = await newMerchantClient(service);
    const a = await fundedMember(client, '100.000000');
    const b = await fundedMember(client, '100.000000');
    const w = await withdraw(client, a, '1');
    await expectCode(client.withdrawals.get(w.id, { onBehalfOf: b.external }), 'not_found', 404);
    await expectCode(other.client.withdrawals.get(w.id), 'not_found', 404);
    await expectCode(other.client.withdrawals.confirm(w.id), 'not_found', 404);
  });

  it("pages a member's withdrawals with cursors, newest first, without loss or repeats under inserts", async () => {
    const { client, m } = await merchantWithMember(service, '1000');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await withdraw(client, m, '1')).id);
    /** A page of the member's withdrawals, as the API answers it. */
    const page = (query: { limit: number; cursor?: string }) =>
      client.request<any>({ method: 'GET', path: '/v1/withdrawals', query, onBehalfOf: m.external });
    const page1 = await page({ limit: 3 });
    assert.equal(page1.data.length, 3);
    assert.equal(page1.has_more, true);
    assert.deepEqual(
      page1.data.map((w: any) => w.id),
      ids.slice(-3).reverse(),
    );
    // A new withdrawal after the first page must not shift the following pages.
    await withdraw(client, m, '1');
    const page2 = await page({ limit: 3, cursor: page1.next_cursor });
    const page3 = await page({ limit: 3, cursor: page2.next_cursor });
    assert.equal(page3.has_more, false);
    assert.equal(page3.next_cursor, null);
    assert.deepEqual(
      [...page1.data, ...page2.data, ...page3.data].map((w: any) => w.id),
      [...ids].reverse(),
    );
    const garbage = await page({ limit: 2, cursor: 'not-a-cursor' });
    assert.equal(garbage.data.length, 2, 'an unreadable cursor restarts from the first page');
    const big = await page({ limit: 1000 });
    assert.equal(big.data.length, 8);
    const sdkListed: string[] = [];
    for await (const w of client.withdrawals.list({ onBehalfOf: m.external, limit: 3 })) sdkListed.push(w.id);
    assert.equal(sdkListed.length, 8, 'client.withdrawals.list: every page');
    const asMerchant: string[] = [];
    for await (const w of client.withdrawals.list({ status: 'locked' })) asMerchant.push(w.id);
    assert.ok(
      ids.every((id) => asMerchant.includes(id)),
      "the merchant lists its members' withdrawals",
    );
    const all: string[] = [];
    for await (const w of client.paginate<any>('/v1/withdrawals', { onBehalfOf: m.external, limit: 2 })) all.push(w.id);
    assert.equal(all.length, 8);
  });

  it('lets 50 parallel withdrawals that exceed the balance post exactly the accepted ones', async () => {
    const { client, m } = await merchantWithMember(service);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => withdraw(client, m, '4')));
    const accepted = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results)
      if (r.status === 'rejected') assert.equal((r.reason as MerchantWalletError).code, 'insufficient_balance');
    assert.equal(accepted, 20, '20 × (4 + fee 1) = 100');
    const bal = await balanceOf(client, m.external);
    assert.equal(bal.available, '0.000000');
    assert.equal(bal.withdrawing, '100.000000');
    const rows = await service.ctx.db.selectFrom('withdrawals').select('id').where('member_id', '=', m.id).execute();
    assert.equal(rows.length, 20, 'refused withdrawals left no row');
  });

  it('posts 20 parallel confirms of one withdrawal once', async () => {
    const { client, m } = await merchantWithMember(service);
    const w = await withdraw(client, m, '30');
    const results = (await Promise.all(Array.from({ length: 20 }, () => client.withdrawals.confirm(w.id)))) as any[];
    assert.equal(results.filter((r) => r.replayed === false).length, 1);
    assert.equal(results.filter((r) => r.replayed === true).length, 19);
    assert.equal((await custodyOf(client)).custody, '69.000000');
    const entries = await service.ctx.db
      .selectFrom('journal_entries')
      .select('id')
      .where('reference_id', '=', w.id)
      .execute();
    assert.equal(entries.length, 2, 'one lock and one confirm');
  });

  it(
    'keeps a disabled asset in both balance lists while money is held in it; nothing held, it leaves them; ' +
      're-enabled, as before',
    async () => {
      const { client } = await newMerchantClient(service);
      const held = await fundedMember(client, '5.5', 'USDC');
      const other = await newMerchantClient(service);
      const emptied = await fundedMember(other.client, '15', 'USDC');
      const w = (await other.client.withdrawals.create(
        { asset: 'USDC', network: 'ETHEREUM', address: ETH_ADDR, amount: '10' },
        { onBehalfOf: emptied.external },
      )) as any;
      await other.client.withdrawals.confirm(w.id);
      const zero = '0.000000';
      const heldBalance = {
        asset: 'USDC',
        available: '5.500000',
        frozen: zero,
        withdrawing: zero,
        earn: zero,
        card: zero,
        total: '5.500000',
      };
      const heldCustody = { asset: 'USDC', custody: '5.500000', prepaid_available: zero };
      const emptyBalance = {
        asset: 'USDC',
        available: zero,
        frozen: zero,
        withdrawing: zero,
        earn: zero,
        card: zero,
        total: zero,
      };
      const emptyCustody = { asset: 'USDC', custody: zero, prepaid_available: zero };
      const lists = async () => ({
        member: await client.balances.list({ onBehalfOf: held.external }),
        merchant: await client.merchant.balances(),
        emptiedMember: await other.client.balances.list({ onBehalfOf: emptied.external }),
        emptiedMerchant: await other.client.merchant.balances(),
      });
      const enabled = {
        member: [heldBalance],
        merchant: [heldCustody],
        emptiedMember: [emptyBalance],
        emptiedMerchant: [emptyCustody],
      };
      assert.deepEqual(await lists(), enabled, 'an enabled asset is listed, zero balances too');
      assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: false })).status, 200);
      try {
        assert.deepEqual(
          await lists(),
          { member: [heldBalance], merchant: [heldCustody], emptiedMember: [], emptiedMerchant: [] },
          'money held in a disabled asset stays visible; a disabled asset holding nothing is not listed',
        );
        await expectCode(
          client.deposits.create({
            member_id: held.external,
            asset: 'USDC',
            amount: '1',
            tx_hash: `0x${randomUUID()}`,
          }),
          'asset_not_allowed',
        );
      } finally {
        assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: true })).status, 200);
      }
      assert.deepEqual(await lists(), enabled);
    },
  );
});
