import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import type { MerchantWalletClient, WebhookDelivery } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService, keyClient } from './support/service.js';
import { fundedMember } from './support/fixtures.js';
import { MerchantWalletError } from '@merchant-wallet/sdk';
import { pumpWebhooks, withReceiver, withStatusReceiver, type Answer } from './support/webhook-receiver.js';

/*
 * Conformance of webhook requests and of what each kind of answer does, through a real receiver:
 * extensions.md §5 (Standard Webhooks headers, the signed content, "a 2xx answer within 15 seconds
 * is a success; other answers are retried"), the reference's "Webhook delivery" states and
 * "GET /v1/webhooks/deliveries".
 */

/** The send timeout, shortened (the configuration allows 1 ms to the contract's 15 s) so a receiver that never answers
 * is seen quickly. */
const timeoutMs = 1_000;
/** Retries a minute apart: none falls due while a test watches a record's first outcome. */
const retryMs = 60_000;

describe('webhooks: conformance of requests and answers', () => {
  let service: RunningService;
  useTestService(
    { config: { webhookRetryScheduleMs: [retryMs, retryMs], webhookDeliveryTimeoutMs: timeoutMs }, merchant: false },
    (s) => ({ service } = s),
  );

  const deliveries = async (client: MerchantWalletClient): Promise<WebhookDelivery[]> => {
    const out: WebhookDelivery[] = [];
    for await (const d of client.webhooks.deliveries({})) out.push(d);
    return out;
  };

  /** A merchant with one endpoint at `url` for deposit.credited, and one such event. */
  async function oneEvent(url: string) {
    const { client, merchantId } = await newMerchantClient(service);
    const endpoint = (await client.webhooks.createEndpoint({ url, event_types: ['deposit.credited'] })) as {
      id: string;
      secret: string;
    };
    const external = `m-${randomUUID().slice(0, 8)}`;
    await fundedMember(client, '5', 'USDT', { external });
    return { client, endpoint, merchantId };
  }

  it(
    'signs "{webhook-id}.{webhook-timestamp}.{body}" with the base64-decoded secret (HMAC-SHA256 written here ' +
      'from extensions §5)',
    async () => {
      await withReceiver(async (receiver) => {
        const { endpoint } = await oneEvent(receiver.url());
        await pumpWebhooks(service, () => receiver.received.length >= 1);
        const [r] = receiver.received;
        const id = String(r!.headers['webhook-id']);
        const timestamp = String(r!.headers['webhook-timestamp']);
        assert.match(timestamp, /^\d{10}$/, 'Unix seconds, not milliseconds');
        assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 60);
        assert.equal(id, JSON.parse(r!.body).event_id, 'webhook-id is the event id');
        assert.match(id, /^evt_/);
        assert.ok(endpoint.secret.startsWith('whsec_'));
        const key = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64');
        assert.equal(key.length, 32);
        const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r!.body}`).digest('base64');
        assert.equal(r!.headers['webhook-signature'], `v1,${expected}`);
        // The key is the decoded secret, not its text.
        const withText = createHmac('sha256', endpoint.secret).update(`${id}.${timestamp}.${r!.body}`).digest('base64');
        assert.notEqual(r!.headers['webhook-signature'], `v1,${withText}`);
      });
    },
  );

  it(
    'a 2xx is sent; a 3xx (not followed), a 4xx, a 5xx and no answer within the timeout are failed, retried ' +
      'later, the endpoint still enabled',
    async () => {
      const answers: Record<string, Answer> = {
        '/no-content': 204,
        '/accepted': 202,
        '/moved': (res) => {
          res.writeHead(302, { location: '/target' });
          res.end();
        },
        '/bad': 400,
        '/missing': 404,
        '/busy': 503,
        '/hang': () => {
          /* never answers */
        },
        '/late-ok': (res) => {
          setTimeout(() => {
            res.statusCode = 200;
            res.end('ok');
          }, timeoutMs + 500);
        },
      };
      await withReceiver(
        (r) => answers[r.path] ?? 200,
        async (receiver) => {
          const expected: Record<string, { status: string; last_http_status: number }> = {
            '/no-content': { status: 'sent', last_http_status: 204 },
            '/accepted': { status: 'sent', last_http_status: 202 },
            '/moved': { status: 'failed', last_http_status: 302 },
            '/bad': { status: 'failed', last_http_status: 400 },
            '/missing': { status: 'failed', last_http_status: 404 },
            '/busy': { status: 'failed', last_http_status: 503 },
            '/hang': { status: 'failed', last_http_status: 0 },
            '/late-ok': { status: 'failed', last_http_status: 0 },
          };
          const merchants = await Promise.all(
            Object.keys(expected).map(async (path) => ({ path, ...(await oneEvent(receiver.url(path))) })),
          );
          await pumpWebhooks(service, async () => {
            for (const m of merchants) if ((await deliveries(m.client))[0]?.attempts !== 1) return false;
            return true;
          });
          for (const m of merchants) {
            const [d] = await deliveries(m.client);
            assert.deepEqual({ status: d!.status, last_http_status: d!.last_http_status }, expected[m.path], m.path);
            if (d!.status === 'sent') assert.equal(d!.next_attempt_at, '', `${m.path}: nothing planned after success`);
            else assert.ok(Date.parse(d!.next_attempt_at) > Date.parse(d!.created_at), `${m.path}: a retry is planned`);
            const [endpoint] = await m.client.webhooks.listEndpoints();
            assert.equal(endpoint!.status, 'enabled', `${m.path}: one failure does not disable`);
          }
          assert.equal(receiver.received.filter((r) => r.path === '/target').length, 0, 'a redirect is not followed');
          assert.equal(receiver.received.filter((r) => r.path === '/moved').length, 1);
          const log = await admin(
            service,
            'GET',
            '/admin/v1/webhooks/deliveries/' +
              (await deliveries(merchants.find((m) => m.path === '/hang')!.client))[0]!.id,
          );
          assert.match(String(log.body.last_error), /no answer within/);
        },
      );
    },
  );
  it(
    'lists deliveries newest first: 20 by default, empty status means all, the status filter pages with its ' +
      'cursor',
    async () => {
      const { client } = await newMerchantClient(service);
      const external = `m-${randomUUID().slice(0, 8)}`;
      await client.members.create({ external_member_id: external });
      for (let i = 0; i < 23; i++)
        await client.deposits.create({ member_id: external, asset: 'USDT', amount: '1', tx_hash: `0x${randomUUID()}` });
      await pumpWebhooks(service, async () => (await deliveries(client)).length === 23);
      const list = (query: Record<string, string | number>) =>
        client.request<{ data: WebhookDelivery[]; has_more: boolean; next_cursor: string | null }>({
          method: 'GET',
          path: '/v1/webhooks/deliveries',
          query,
        });
      const first = await list({});
      assert.equal(first.data.length, 20, 'default page size 20');
      assert.equal(first.has_more, true);
      const empty = await list({ status: '' });
      assert.deepEqual(
        empty.data.map((d) => d.id),
        first.data.map((d) => d.id),
        'an empty status means all',
      );
      const created = first.data.map((d) => Date.parse(d.created_at));
      assert.deepEqual(
        created,
        [...created].sort((a, b) => b - a),
        'newest first',
      );
      const a = await list({ status: 'no_subscriber', limit: 10 });
      const b = await list({ status: 'no_subscriber', limit: 10, cursor: a.next_cursor! });
      const c = await list({ status: 'no_subscriber', limit: 10, cursor: b.next_cursor! });
      const ids = [...a.data, ...b.data, ...c.data].map((d) => d.id);
      assert.equal(ids.length, 23);
      assert.equal(new Set(ids).size, 23, 'no record twice across pages');
      assert.equal(c.has_more, false);
      assert.equal((await list({ status: 'sent' })).data.length, 0);
    },
  );
  it(
    'a retry carries the same webhook-id, its own webhook-timestamp and a signature over that; redeliver takes ' +
      'merchant:read and answers {id, queued: true}',
    async () => {
      await withStatusReceiver(503, async (receiver, answerWith) => {
        const { client, endpoint, merchantId } = await oneEvent(receiver.url());
        await pumpWebhooks(service, () => receiver.received.length >= 1);
        await client.sandbox.advanceClock(retryMs / 1000 + 1);
        await pumpWebhooks(service, () => receiver.received.length >= 2);
        const verify = (r: (typeof receiver.received)[number]) => {
          const key = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64');
          const id = String(r.headers['webhook-id']);
          const ts = String(r.headers['webhook-timestamp']);
          assert.equal(
            r.headers['webhook-signature'],
            `v1,${createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64')}`,
          );
        };
        const [first, second] = receiver.received;
        assert.equal(second!.headers['webhook-id'], first!.headers['webhook-id'], 'the event id, for deduplication');
        assert.equal(second!.body, first!.body, 'the same body');
        verify(first!);
        verify(second!);
        // The third and last attempt fails too: dead. A key with merchant:read alone redelivers it.
        await client.sandbox.advanceClock(retryMs / 1000 + 1);
        await pumpWebhooks(service, async () => (await deliveries(client))[0]?.status === 'dead');
        const [dead] = await deliveries(client);
        assert.equal(dead!.attempts, 3);
        const noRead = await keyClient(service, merchantId, { scopes: ['webhooks:write'] });
        assert.equal((await noRead.webhooks.listEndpoints()).length, 1, 'webhooks:write includes webhooks:read');
        await assert.rejects(
          noRead.webhooks.redeliver(dead!.id),
          (e: unknown) => e instanceof MerchantWalletError && e.code === 'insufficient_scope' && e.status === 403,
        );
        const logReader = await keyClient(service, merchantId, { scopes: ['merchant:read'] });
        answerWith(200);
        assert.deepEqual(await logReader.webhooks.redeliver(dead!.id.slice('whd_'.length)), {
          id: dead!.id,
          queued: true,
        });
        await pumpWebhooks(service, async () => (await deliveries(client))[0]?.status === 'sent');
        verify(receiver.received[receiver.received.length - 1]!);
        assert.equal(
          receiver.received[receiver.received.length - 1]!.headers['webhook-id'],
          first!.headers['webhook-id'],
        );
      });
    },
  );
});
