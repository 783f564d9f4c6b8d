import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Deposit, MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { expectCode } from './support/expect.js';
import { clientFor, createKey, newMerchantClient, useTestService } from './support/service.js';

/** Issue 9, point 6: GET /v1/deposits/{id} and GET /v1/deposits, through the SDK. */
describe('reading deposits back', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  async function member(client: MerchantWalletClient) {
    const external = `r-${randomUUID().slice(0, 8)}`;
    const m = (await client.members.create({ external_member_id: external })) as { id: string };
    return { id: m.id, external };
  }
  const deposit = (client: MerchantWalletClient, memberId: string, amount = '1', asset = 'USDT') =>
    client.deposits.create({
      member_id: memberId,
      asset,
      amount,
      tx_hash: `0x${randomUUID()}`,
      network: asset === 'USDT' ? 'TRON' : undefined,
    });
  const all = async (it: AsyncIterable<Deposit>) => {
    const out: string[] = [];
    for await (const d of it) out.push(d.id);
    return out;
  };

  it('reads a deposit back exactly as it was created, with or without the dep_ prefix', async () => {
    const { client } = await newMerchantClient(service);
    const m = await member(client);
    const created = await deposit(client, m.external, '12.5');
    const read = await client.deposits.get(created.id);
    assert.deepEqual(read, created);
    assert.equal(read.amount, '12.500000');
    assert.equal(read.member_id, m.id);
    assert.equal(read.network, 'TRON');
    assert.deepEqual(await client.deposits.get(created.id.replace(/^dep_/, '')), created);
    await expectCode(client.deposits.get(`dep_${randomUUID()}`), 'not_found', 404);
  });

  it("answers 404 for another merchant's deposit and for the same merchant's other environment", async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const other = await newMerchantClient(service);
    const m = await member(client);
    const created = await deposit(client, m.external);
    await expectCode(other.client.deposits.get(created.id), 'not_found', 404);
    assert.deepEqual(await all(other.client.deposits.list()), []);
    const live = clientFor(
      service,
      await createKey(service, merchantId, { environment: 'production', scopes: ['deposits:read'] }),
    );
    await expectCode(live.deposits.get(created.id), 'not_found', 404);
    assert.deepEqual(await all(live.deposits.list()), []);
  });

  it('shows a member only its own deposits; the merchant sees all', async () => {
    const { client } = await newMerchantClient(service);
    const a = await member(client);
    const b = await member(client);
    const da = await deposit(client, a.external);
    const db = await deposit(client, b.id);
    assert.deepEqual(await client.deposits.get(da.id, { onBehalfOf: a.external }), da);
    await expectCode(client.deposits.get(da.id, { onBehalfOf: b.external }), 'not_found', 404);
    assert.deepEqual(await all(client.deposits.list({ onBehalfOf: b.external })), [db.id]);
    assert.deepEqual(await all(client.deposits.list({ onBehalfOf: a.id })), [da.id]);
    // A member filter naming someone else, on behalf of a member, finds nothing.
    assert.deepEqual(await all(client.deposits.list({ onBehalfOf: b.external, member_id: a.external })), []);
    assert.deepEqual(await all(client.deposits.list({ onBehalfOf: b.external, member_id: b.id })), [db.id]);
    assert.deepEqual(await all(client.deposits.list()), [db.id, da.id]);
  });

  it('filters by member (either id form), asset and creation time, combined', async () => {
    const { client } = await newMerchantClient(service);
    const a = await member(client);
    const b = await member(client);
    const d1 = await deposit(client, a.external, '1', 'USDT');
    const d2 = await deposit(client, a.external, '2', 'BTC');
    const d3 = await deposit(client, b.external, '3', 'USDT');
    const d4 = await deposit(client, a.external, '4', 'USDT');
    const at: Record<string, string> = {
      [d1.id]: '2026-01-01T00:00:00.000Z',
      [d2.id]: '2026-02-01T00:00:00.000Z',
      [d3.id]: '2026-03-01T00:00:00.000Z',
      [d4.id]: '2026-04-01T00:00:00.000Z',
    };
    for (const [id, t] of Object.entries(at))
      await service.ctx.db
        .updateTable('deposits')
        .set({ created_at: new Date(t) })
        .where('id', '=', id)
        .execute();

    assert.deepEqual(await all(client.deposits.list({ member_id: a.external })), [d4.id, d2.id, d1.id]);
    assert.deepEqual(await all(client.deposits.list({ member_id: a.id })), [d4.id, d2.id, d1.id]);
    assert.deepEqual(await all(client.deposits.list({ asset: 'usdt' })), [d4.id, d3.id, d1.id]);
    assert.deepEqual(await all(client.deposits.list({ asset: 'BTC', member_id: a.external })), [d2.id]);
    assert.deepEqual(
      await all(client.deposits.list({ created_gte: '2026-02-01T00:00:00Z' })),
      [d4.id, d3.id, d2.id],
      'gte is inclusive',
    );
    assert.deepEqual(
      await all(client.deposits.list({ created_lt: '2026-03-01T00:00:00Z' })),
      [d2.id, d1.id],
      'lt is exclusive',
    );
    assert.deepEqual(
      await all(
        client.deposits.list({
          created_gte: new Date('2026-01-15T00:00:00Z'),
          created_lt: '2026-04-01T01:00:00+01:00',
          asset: 'USDT',
        }),
      ),
      [d3.id],
      'a time zone offset is honoured',
    );
    assert.equal((await client.deposits.get(d1.id)).created_at, at[d1.id]);
    assert.deepEqual(await all(client.deposits.list({ member_id: 'nobody-here' })), []);
    assert.deepEqual(await all(client.deposits.list({ asset: 'DOGE' })), []);
    await expectCode(
      client.request({ method: 'GET', path: '/v1/deposits', query: { created_gte: 'yesterday' } }),
      'invalid_request',
      400,
    );
    await expectCode(
      client.request({ method: 'GET', path: '/v1/deposits', query: { asset: 'US DT' } }),
      'invalid_request',
      400,
    );
  });

  it('pages newest first with cursors, without loss or repeats under inserts', async () => {
    const { client } = await newMerchantClient(service);
    const m = await member(client);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await deposit(client, m.external, String(i + 1))).id);
    const page1 = await client.request<any>({ method: 'GET', path: '/v1/deposits', query: { limit: 3 } });
    assert.deepEqual(
      page1.data.map((d: Deposit) => d.id),
      ids.slice(-3).reverse(),
    );
    assert.equal(page1.has_more, true);
    await deposit(client, m.external, '100');
    const page2 = await client.request<any>({
      method: 'GET',
      path: '/v1/deposits',
      query: { limit: 3, cursor: page1.next_cursor },
    });
    const page3 = await client.request<any>({
      method: 'GET',
      path: '/v1/deposits',
      query: { limit: 3, cursor: page2.next_cursor },
    });
    assert.equal(page3.has_more, false);
    assert.equal(page3.next_cursor, null);
    assert.deepEqual(
      [...page1.data, ...page2.data, ...page3.data].map((d: Deposit) => d.id),
      [...ids].reverse(),
    );
    const garbage = await client.request<any>({
      method: 'GET',
      path: '/v1/deposits',
      query: { limit: 2, cursor: 'not-a-cursor' },
    });
    assert.equal(garbage.data.length, 2, 'an unreadable cursor restarts from the first page');
    const walked = await all(client.deposits.list({ limit: 2 }));
    assert.equal(walked.length, 8);
    assert.equal(new Set(walked).size, 8);
    const big = await client.request<any>({ method: 'GET', path: '/v1/deposits', query: { limit: 1000 } });
    assert.equal(big.data.length, 8, 'a large limit is capped, not refused');
  });

  it('needs deposits:read (granted by deposits:write); the read scope cannot report deposits', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    const m = await member(client);
    const created = await deposit(client, m.external);
    const reader = clientFor(service, await createKey(service, merchantId, { scopes: ['deposits:read'] }));
    assert.deepEqual(await reader.deposits.get(created.id), created);
    assert.deepEqual(await all(reader.deposits.list()), [created.id]);
    await expectCode(
      reader.deposits.create({ member_id: m.external, asset: 'USDT', amount: '1', tx_hash: '0x1' }),
      'insufficient_scope',
      403,
    );
    const outsider = clientFor(
      service,
      await createKey(service, merchantId, { scopes: ['members:write', 'withdrawals:write'] }),
    );
    await expectCode(outsider.deposits.get(created.id), 'insufficient_scope', 403);
    await expectCode(outsider.request({ method: 'GET', path: '/v1/deposits' }), 'insufficient_scope', 403);
  });

  it('answers ids and filters that cannot name anything with a 4xx, never a 500', async () => {
    const { client } = await newMerchantClient(service);
    for (const id of ['\u0000', 'dep_\u0000x', '日本', 'dep_%']) {
      const res = await client.requestRaw({ method: 'GET', path: `/v1/deposits/${encodeURIComponent(id)}` });
      assert.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(id)}: ${res.status}`);
      assert.equal(typeof res.headers['x-request-id'], 'string');
    }
    const res = await client.requestRaw({ method: 'GET', path: '/v1/deposits', query: { member_id: 'a\u0000b' } });
    assert.ok(res.status === 200 || (res.status >= 400 && res.status < 500), String(res.status));
  });
});
