import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MerchantWalletError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { pumpWebhooks, startReceiver } from './support/webhook-receiver.js';
import { clientFor, createKey, newMerchantClient, useTestService } from './support/service.js';

/*
 * The events API (extensions 11, docs/events.md): list filters, one event, scope, retention on the
 * sandbox clock, replay. The stream has its own file (events-stream.test.ts).
 */

interface Ev {
  event_id: string;
  event_type: string;
  created_at: string;
  merchant_id: string;
  livemode: boolean;
  data: { object: string; id: string; external_member_id: string; status: string; status_version: number };
}
interface Page { data: Ev[]; next_cursor: string | null; has_more: boolean }

const TRON = 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW';

async function expectCode(promise: Promise<unknown>, code: string, status?: number) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof MerchantWalletError, String(err));
    assert.equal(err.code, code, `${err.code}: ${err.message}`);
    if (status) assert.equal(err.status, status);
    return true;
  });
}

const list = (client: MerchantWalletClient, query: Record<string, string | number | boolean> = {}) =>
  client.request<Page>({ method: 'GET', path: '/v1/events', query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });

let service: RunningService;
let client: MerchantWalletClient;
let merchantId: string;
useTestService({ config: { workers: false } }, (s) => ({ service, client, merchantId } = s));

/** A member with a deposit (deposit.credited) and a withdrawal (withdrawal.locked): answers their ids. */
async function someEvents(c: MerchantWalletClient) {
  const external = `ev-${randomUUID()}`;
  await c.members.create({ external_member_id: external });
  const deposit = (await c.deposits.create({ member_id: external, asset: 'USDT', amount: '100', tx_hash: `t-${randomUUID()}` })) as { id: string };
  const withdrawal = (await c.withdrawals.create({ asset: 'USDT', network: 'TRON', address: TRON, amount: '10' }, { onBehalfOf: external })) as { id: string };
  return { external, depositId: deposit.id, withdrawalId: withdrawal.id };
}

describe('GET /v1/events and /v1/events/{id}', () => {
  let ids: Awaited<ReturnType<typeof someEvents>>;
  before(async () => {
    ids = await someEvents(client);
  });

  it('lists the events newest first, each exactly its webhook body', async () => {
    const page = await list(client);
    assert.deepEqual(page.data.map((e) => e.event_type), ['withdrawal.locked', 'deposit.credited']);
    const [w, d] = page.data;
    assert.match(w!.event_id, /^evt_/);
    assert.deepEqual(Object.keys(w!), ['event_id', 'event_type', 'created_at', 'merchant_id', 'livemode', 'data']);
    assert.deepEqual(w!.data, { object: 'withdrawal', id: ids.withdrawalId, external_member_id: ids.external, status: 'locked', status_version: w!.data.status_version });
    assert.equal(w!.merchant_id, merchantId);
    assert.equal(w!.livemode, false);
    assert.equal(d!.data.id, ids.depositId);
    // The one event, with or without its prefix.
    assert.deepEqual(await client.request({ method: 'GET', path: `/v1/events/${w!.event_id}` }), w);
    assert.deepEqual(await client.request({ method: 'GET', path: `/v1/events/${w!.event_id.slice(4)}` }), w);
    await expectCode(client.request({ method: 'GET', path: `/v1/events/evt_${randomUUID()}` }), 'not_found', 404);
  });

  it('filters by type (exact, prefix, unknown), object, time range, and pages with a cursor', async () => {
    assert.deepEqual((await list(client, { type: 'deposit.credited' })).data.map((e) => e.data.id), [ids.depositId]);
    assert.deepEqual((await list(client, { type: 'withdrawal.*' })).data.map((e) => e.data.id), [ids.withdrawalId]);
    assert.deepEqual((await list(client, { type: '*' })).data.length, 2);
    assert.deepEqual(await list(client, { type: 'no.such.type' }), { data: [], next_cursor: null, has_more: false });
    assert.deepEqual((await list(client, { type: 'nothing.*' })).data, []);
    assert.deepEqual((await list(client, { object_id: ids.depositId })).data.map((e) => e.event_type), ['deposit.credited']);
    const all = (await list(client)).data;
    const older = all[1]!.created_at;
    const newer = all[0]!.created_at;
    assert.equal((await list(client, { created_gte: older })).data.length, 2);
    assert.deepEqual((await list(client, { created_gte: newer })).data.map((e) => e.event_id), [all[0]!.event_id]);
    assert.deepEqual((await list(client, { created_lt: newer })).data.map((e) => e.event_id), newer === older ? [] : [all[1]!.event_id]);
    assert.deepEqual((await list(client, { created_lt: older })).data, []);
    await expectCode(list(client, { created_gte: 'yesterday' }), 'invalid_request', 400);
    const first = await list(client, { limit: 1 });
    assert.equal(first.has_more, true);
    const second = await list(client, { limit: 1, cursor: first.next_cursor! });
    assert.deepEqual([...first.data, ...second.data].map((e) => e.event_id), all.map((e) => e.event_id));
    assert.equal(second.has_more, false);
  });

  it('filters by delivery outcome: true when every record is sent, false when one failed, dead or no_subscriber', async () => {
    // Both events so far were fanned out to no endpoint: no_subscriber.
    await pumpWebhooks(service, async () => (await list(client, { delivery_success: false })).data.length === 2);
    assert.deepEqual((await list(client, { delivery_success: true })).data, []);
    const receiver = await startReceiver((r) => (r.body.includes('deposit.credited') ? 500 : 200));
    try {
      await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] });
      const more = await someEvents(client);
      await pumpWebhooks(service, async () => receiver.received.length >= 2);
      await pumpWebhooks(service, async () => (await list(client, { delivery_success: true })).data.length === 1);
      assert.deepEqual((await list(client, { delivery_success: true })).data.map((e) => e.data.id), [more.withdrawalId]);
      const failed = (await list(client, { delivery_success: false })).data.map((e) => e.data.id);
      assert.deepEqual(failed, [more.depositId, ids.withdrawalId, ids.depositId]);
    } finally {
      await receiver.close();
    }
  });

  it('answers only the merchant and environment of the key, and needs events:read', async () => {
    const other = await newMerchantClient(service);
    const mine = (await list(client)).data[0]!;
    assert.deepEqual((await list(other.client)).data, []);
    await expectCode(other.client.request({ method: 'GET', path: `/v1/events/${mine.event_id}` }), 'not_found', 404);
    const production = clientFor(service, await createKey(service, merchantId, { environment: 'production' }));
    await expectCode(production.request({ method: 'GET', path: `/v1/events/${mine.event_id}` }), 'not_found', 404);
    for (const scopes of [['webhooks:write', 'merchant:read'], ['merchant:write']]) {
      const narrow = clientFor(service, await createKey(service, merchantId, { scopes }));
      await expectCode(list(narrow), 'insufficient_scope', 403);
    }
  });
});
