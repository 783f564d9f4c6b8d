import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { pumpWebhooks, withReceiver } from './support/webhook-receiver.js';
import { newMerchantClient, useTestService, keyClient } from './support/service.js';
import { expectCode } from './support/expect.js';
import { TRON } from './support/fixtures.js';

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
interface Page {
  data: Ev[];
  next_cursor: string | null;
  has_more: boolean;
}

const list = (client: MerchantWalletClient, query: Record<string, string | number | boolean> = {}) =>
  client.request<Page>({
    method: 'GET',
    path: '/v1/events',
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
  });

let service: RunningService;
let client: MerchantWalletClient;
let merchantId: string;
useTestService({ config: { workers: false } }, (s) => ({ service, client, merchantId } = s));

/** A member with a deposit (deposit.credited) and a withdrawal (withdrawal.locked): answers their ids. */
async function someEvents(c: MerchantWalletClient) {
  const external = `ev-${randomUUID()}`;
  await c.members.create({ external_member_id: external });
  const deposit = (await c.deposits.create({
    member_id: external,
    asset: 'USDT',
    amount: '100',
    tx_hash: `t-${randomUUID()}`,
  })) as { id: string };
  const withdrawal = (await c.withdrawals.create(
    { asset: 'USDT', network: 'TRON', address: TRON, amount: '10' },
    { onBehalfOf: external },
  )) as { id: string };
  return { external, depositId: deposit.id, withdrawalId: withdrawal.id };
}

describe('GET /v1/events and /v1/events/{id}', () => {
  let ids: Awaited<ReturnType<typeof someEvents>>;
  before(async () => {
    ids = await someEvents(client);
  });

  it('lists the events newest first, each exactly its webhook body', async () => {
    const page = await list(client);
    assert.deepEqual(
      page.data.map((e) => e.event_type),
      ['withdrawal.locked', 'deposit.credited'],
    );
    const [w, d] = page.data;
    assert.match(w!.event_id, /^evt_/);
    assert.deepEqual(Object.keys(w!), ['event_id', 'event_type', 'created_at', 'merchant_id', 'livemode', 'data']);
    assert.deepEqual(w!.data, {
      object: 'withdrawal',
      id: ids.withdrawalId,
      external_member_id: ids.external,
      status: 'locked',
      status_version: w!.data.status_version,
    });
    assert.equal(w!.merchant_id, merchantId);
    assert.equal(w!.livemode, false);
    assert.equal(d!.data.id, ids.depositId);
    // The one event, with or without its prefix.
    assert.deepEqual(await client.request({ method: 'GET', path: `/v1/events/${w!.event_id}` }), w);
    assert.deepEqual(await client.request({ method: 'GET', path: `/v1/events/${w!.event_id.slice(4)}` }), w);
    await expectCode(client.request({ method: 'GET', path: `/v1/events/evt_${randomUUID()}` }), 'not_found', 404);
  });

  it('filters by type (exact, prefix, unknown), object, time range, and pages with a cursor', async () => {
    assert.deepEqual(
      (await list(client, { type: 'deposit.credited' })).data.map((e) => e.data.id),
      [ids.depositId],
    );
    assert.deepEqual(
      (await list(client, { type: 'withdrawal.*' })).data.map((e) => e.data.id),
      [ids.withdrawalId],
    );
    assert.deepEqual((await list(client, { type: '*' })).data.length, 2);
    assert.deepEqual(await list(client, { type: 'no.such.type' }), { data: [], next_cursor: null, has_more: false });
    assert.deepEqual((await list(client, { type: 'nothing.*' })).data, []);
    assert.deepEqual(
      (await list(client, { object_id: ids.depositId })).data.map((e) => e.event_type),
      ['deposit.credited'],
    );
    const all = (await list(client)).data;
    const older = all[1]!.created_at;
    const newer = all[0]!.created_at;
    assert.equal((await list(client, { created_gte: older })).data.length, 2);
    assert.deepEqual(
      (await list(client, { created_gte: newer })).data.map((e) => e.event_id),
      [all[0]!.event_id],
    );
    assert.deepEqual(
      (await list(client, { created_lt: newer })).data.map((e) => e.event_id),
      newer === older ? [] : [all[1]!.event_id],
    );
    assert.deepEqual((await list(client, { created_lt: older })).data, []);
    await expectCode(list(client, { created_gte: 'yesterday' }), 'invalid_request', 400);
    const first = await list(client, { limit: 1 });
    assert.equal(first.has_more, true);
    const second = await list(client, { limit: 1, cursor: first.next_cursor! });
    assert.deepEqual(
      [...first.data, ...second.data].map((e) => e.event_id),
      all.map((e) => e.event_id),
    );
    assert.equal(second.has_more, false);
  });

  it(
    'filters by delivery outcome: true when every record is sent, false when one failed, ' + 'dead or no_subscriber',
    async () => {
      // Both events so far were fanned out to no endpoint: no_subscriber.
      await pumpWebhooks(service, async () => (await list(client, { delivery_success: false })).data.length === 2);
      assert.deepEqual((await list(client, { delivery_success: true })).data, []);
      await withReceiver(
        (r) => (r.body.includes('deposit.credited') ? 500 : 200),
        async (receiver) => {
          await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] });
          const more = await someEvents(client);
          await pumpWebhooks(service, async () => receiver.received.length >= 2);
          await pumpWebhooks(service, async () => (await list(client, { delivery_success: true })).data.length === 1);
          assert.deepEqual(
            (await list(client, { delivery_success: true })).data.map((e) => e.data.id),
            [more.withdrawalId],
          );
          const failed = (await list(client, { delivery_success: false })).data.map((e) => e.data.id);
          assert.deepEqual(failed, [more.depositId, ids.withdrawalId, ids.depositId]);
        },
      );
    },
  );

  it('answers only the merchant and environment of the key, and needs events:read', async () => {
    const other = await newMerchantClient(service);
    const mine = (await list(client)).data[0]!;
    assert.deepEqual((await list(other.client)).data, []);
    await expectCode(other.client.request({ method: 'GET', path: `/v1/events/${mine.event_id}` }), 'not_found', 404);
    const production = await keyClient(service, merchantId, { environment: 'production' });
    await expectCode(production.request({ method: 'GET', path: `/v1/events/${mine.event_id}` }), 'not_found', 404);
    for (const scopes of [['webhooks:write', 'merchant:read'], ['merchant:write']]) {
      const narrow = await keyClient(service, merchantId, { scopes });
      await expectCode(list(narrow), 'insufficient_scope', 403);
    }
  });
});

describe('POST /v1/webhooks/endpoints/{id}/replay', () => {
  it(
    'queues the events not sent (by default) or all of them, of the types the endpoint takes; refuses bad ' +
      'ranges and disabled endpoints',
    async () => {
      const { client: c } = await newMerchantClient(service);
      let failing = true;
      await withReceiver(
        () => (failing ? 500 : 200),
        async (receiver) => {
          const endpoint = (await c.webhooks.createEndpoint({
            url: receiver.url(),
            event_types: ['deposit.credited'],
          })) as { id: string };
          const start = new Date(Date.now() - 1000).toISOString();
          const a = await someEvents(c);
          const b = await someEvents(c);
          // Both deposits' first attempts fail; the withdrawals go to nobody (no_subscriber).
          await pumpWebhooks(service, async () => receiver.received.length >= 2);
          const replay = (body: unknown, key = randomUUID()) =>
            c.request<{ id: string; queued: number }>({
              method: 'POST',
              path: `/v1/webhooks/endpoints/${endpoint.id}/replay`,
              body,
              idempotencyKey: key,
            });
          failing = false;
          const key = randomUUID();
          assert.deepEqual(await replay({ since: start }, key), { id: endpoint.id, queued: 2 });
          // Same key: the stored answer; nothing queued again.
          assert.deepEqual(await replay({ since: start }, key), { id: endpoint.id, queued: 2 });
          await pumpWebhooks(service, async () => receiver.received.filter((r) => r.headers['webhook-id']).length >= 4);
          await pumpWebhooks(
            service,
            async () => (await list(c, { delivery_success: true, type: 'deposit.credited' })).data.length === 2,
          );
          const ids = receiver.received
            .slice(2)
            .map((r) => JSON.parse(r.body).data.id)
            .sort();
          assert.deepEqual(ids, [a.depositId, b.depositId].sort());
          // Everything sent: nothing failed left to replay; all of them again with only_failed false.
          assert.deepEqual(await replay({ since: start }), { id: endpoint.id, queued: 0 });
          assert.deepEqual(await replay({ since: start, only_failed: false }), { id: endpoint.id, queued: 2 });
          await pumpWebhooks(service, async () => receiver.received.length >= 6);
          // A range: `until` excludes the later events.
          const all = (await list(c, { type: 'deposit.credited' })).data;
          await pumpWebhooks(
            service,
            async () => (await list(c, { delivery_success: true, type: 'deposit.credited' })).data.length === 2,
          );
          assert.deepEqual(await replay({ since: start, until: all[0]!.created_at, only_failed: false }), {
            id: endpoint.id,
            queued: 1,
          });
          await pumpWebhooks(service, async () => receiver.received.length >= 7);
          // Refusals.
          await expectCode(
            replay({ since: new Date(Date.now() - 31 * 86_400_000).toISOString() }),
            'state_invalid',
            400,
          );
          await expectCode(replay({ since: start, until: start }), 'invalid_request', 400);
          await expectCode(
            c.request({
              method: 'POST',
              path: `/v1/webhooks/endpoints/${endpoint.id}/replay`,
              body: { since: start },
              idempotencyKey: false,
            }),
            'idempotency_key_required',
            400,
          );
          await c.webhooks.disableEndpoint(endpoint.id);
          await expectCode(replay({ since: start }), 'state_invalid', 400);
          await expectCode(
            c.request({
              method: 'POST',
              path: `/v1/webhooks/endpoints/whe_${randomUUID()}/replay`,
              body: { since: start },
            }),
            'not_found',
            404,
          );
        },
      );
    },
  );

  it('binds an event that had no subscriber to the endpoint', async () => {
    const { client: c } = await newMerchantClient(service);
    await withReceiver(async (receiver) => {
      const start = new Date(Date.now() - 1000).toISOString();
      const a = await someEvents(c);
      await pumpWebhooks(service, async () => (await list(c, { delivery_success: false })).data.length === 2);
      const endpoint = (await c.webhooks.createEndpoint({
        url: receiver.url(),
        event_types: ['withdrawal.locked'],
      })) as { id: string };
      assert.deepEqual(
        await c.request({
          method: 'POST',
          path: `/v1/webhooks/endpoints/${endpoint.id}/replay`,
          body: { since: start },
        }),
        { id: endpoint.id, queued: 1 },
      );
      await pumpWebhooks(service, async () => receiver.received.length >= 1);
      assert.equal(JSON.parse(receiver.received[0]!.body).data.id, a.withdrawalId);
      await pumpWebhooks(service, async () => (await list(c, { delivery_success: true })).data.length === 1);
    });
  });
});

describe('retention on the sandbox clock', () => {
  it(
    'prunes events past EVENT_RETENTION_DAYS with their delivery records, ' + 'never one a delivery still needs',
    async () => {
      const { client: c } = await newMerchantClient(service);
      await withReceiver(
        () => 500,
        async (receiver) => {
          await c.webhooks.createEndpoint({ url: receiver.url(), event_types: ['deposit.credited'] });
          const old = await someEvents(c);
          // Fanned out: the deposit's first attempt fails (retries to come), the withdrawal had no subscriber.
          await pumpWebhooks(service, async () => receiver.received.length >= 1);
          const deliveries = async () =>
            (
              await c.request<{ data: { event_id: string; status: string }[] }>({
                method: 'GET',
                path: '/v1/webhooks/deliveries',
                query: { limit: '100' },
              })
            ).data;
          assert.equal((await deliveries()).length, 2);
          await c.sandbox.advanceClock(29 * 86_400);
          assert.equal((await list(c)).data.length, 2, 'kept for 30 days');
          // Written now and not fanned out yet (no worker runs here): a delivery still needs them.
          const fresh = await someEvents(c);
          await c.sandbox.advanceClock(2 * 86_400 + 60);
          // The old deposit's retries ran out (dead) as the clock passed them; then both old events went, with their
          // records.
          assert.deepEqual(
            (await list(c)).data.map((e) => e.data.id).sort(),
            [fresh.depositId, fresh.withdrawalId].sort(),
          );
          assert.deepEqual(await deliveries(), []);
          assert.ok(receiver.received.length > 1, 'the retries were attempted before the prune');
          await c.sandbox.advanceClock(29 * 86_400);
          assert.equal((await list(c)).data.length, 2, 'not fanned out: kept past the retention');
          // Fanned out now: as soon as their records end (the withdrawal's at once, no_subscriber; the
          // deposit's once its endpoint, failing for days, is disabled and the record goes dead), the
          // ticker prunes them on the merchant's time.
          await pumpWebhooks(service, async () => (await list(c)).data.length === 0);
          assert.deepEqual(await deliveries(), []);
          void old;
        },
      );
    },
  );
});
