import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { Webhook } from 'standardwebhooks';
import {
  MerchantWalletError,
  verifyWebhookSignature,
  type MerchantWalletClient,
  type WebhookDelivery,
} from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { recordEvent } from '../src/events/index.js';
import { fanOutBatch } from '../src/modules/webhooks/fan-out.js';
import { updateEndpoint } from '../src/modules/webhooks/service.js';
import { enqueue } from '../src/jobs/queries.js';
import { postOnce } from '../src/modules/webhooks/http-post.js';
import {
  pumpWebhooks,
  startReceiver,
  withReceiver,
  webhookBodyFields,
  webhookDataFields,
  type Receiver,
  withStatusReceiver,
} from './support/webhook-receiver.js';
import {
  admin,
  createMerchant,
  newMerchantClient,
  useTestService,
  keyClient,
  approvedProductionClient,
} from './support/service.js';
import type {
  CreatedWebhookEndpoint,
  DeletedWebhookEndpoint,
  MerchantDepositAddress,
  RolledWebhookEndpoint,
  WebhookEndpoint,
  WebhookRequeueResult,
  Withdrawal,
} from '@merchant-wallet/sdk';
import type { Static } from 'typebox';
import type {
  CreatedEndpoint,
  DeletedEndpoint,
  Endpoint,
  RequeueResult,
  RolledEndpoint,
} from '../src/modules/webhooks/schemas.js';
import type { DepositAddress } from '../src/modules/merchant-deposit-address/routes.js';
import type { Withdrawal as WithdrawalSchema } from '../src/modules/withdrawals/routes.js';
import { all, TRON, fundedMember, rowById } from './support/fixtures.js';
import { expectCode } from './support/expect.js';

/*
 * The SDK declares its types itself (a client package does not import the server); the type checker
 * holds them to the route schemas: what the server sends is assignable to the SDK's type, and the
 * SDK names no field the server does not send (index signatures, kept for forward compatibility, aside).
 */
type Named<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
type Holds<T extends true> = T;
type Matches<Server, Sdk> = [Server] extends [Named<Sdk>]
  ? [Exclude<keyof Named<Sdk>, keyof Server>] extends [never]
    ? true
    : false
  : false;
export type SdkWebhookTypesMatchServer = [
  Holds<Matches<Static<typeof Endpoint>, WebhookEndpoint>>,
  Holds<Matches<Static<typeof CreatedEndpoint>, CreatedWebhookEndpoint>>,
  Holds<Matches<Static<typeof RolledEndpoint>, RolledWebhookEndpoint>>,
  Holds<Matches<Static<typeof DeletedEndpoint>, DeletedWebhookEndpoint>>,
  Holds<Matches<Static<typeof RequeueResult>, WebhookRequeueResult>>,
  Holds<Matches<Static<typeof DepositAddress>, MerchantDepositAddress>>,
  Holds<Matches<Static<typeof WithdrawalSchema>, Withdrawal>>,
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks', () => {
  let service: RunningService;
  /**
   * Four attempts, a minute apart: far longer than any test's own run, so no retry falls due on
   * real time while a test watches a state. Tests pass the retries by advancing the sandbox clock
   * (production records, which have no such clock, are made due directly).
   */
  const retryMs = 60_000;
  useTestService(
    { config: { webhookRetryScheduleMs: [retryMs, retryMs, retryMs] }, merchant: false },
    (s) => ({ service } = s),
  );

  const pump = (done: () => boolean | Promise<boolean>, timeoutMs?: number) => pumpWebhooks(service, done, timeoutMs);

  const deliveries = (client: MerchantWalletClient, status?: string) =>
    all<WebhookDelivery>(client.webhooks.deliveries(status === undefined ? {} : { status }));

  async function deposit(client: MerchantWalletClient, member: string, amount = '10') {
    return (await client.deposits.create({
      member_id: member,
      asset: 'USDT',
      amount,
      tx_hash: `0x${randomUUID()}`,
    })) as any;
  }

  /**
   * A merchant's endpoint at `receiver` and the delivery of a deposit's event to it, its first attempt cut as a
   * claim by a process that then died would leave it: attempt 1 in flight (never finished), the lease until
   * `leaseUntil`.
   */
  async function cutDelivery(receiver: Receiver, member: string, leaseUntil: RawBuilder<Date>) {
    const { client } = await newMerchantClient(service);
    const endpoint = (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
    await fundedMember(client, '10', 'USDT', { external: member });
    await service.workers.tick();
    const [d] = await deliveries(client);
    await service.ctx.db
      .updateTable('webhook_deliveries')
      .set({ attempts: 1, round_attempts: 1, lease_until: leaseUntil })
      .where('id', '=', d!.id)
      .execute();
    await service.ctx.db
      .insertInto('webhook_delivery_attempts')
      .values({ delivery_id: d!.id, generation: 0, attempt: 1, finished_at: null })
      .execute();
    return { client, endpoint, d: d! };
  }

  /** The attempts of a delivery, in order, with their outcomes. */
  const attemptOutcomes = (deliveryId: string) =>
    service.ctx.db
      .selectFrom('webhook_delivery_attempts')
      .select(['attempt', 'outcome'])
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempt')
      .execute();

  it('delivers signed events of a withdrawal to a real receiver; the body has ids and status only', async () => {
    await withReceiver(async (receiver) => {
      const { client, merchantId } = await newMerchantClient(service);
      const endpoint = (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
      assert.match(endpoint.id, /^whe_[0-9a-f-]{36}$/);
      assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(Object.keys(endpoint).sort(), ['created_at', 'event_types', 'id', 'secret', 'status', 'url']);
      assert.equal(endpoint.status, 'enabled');
      assert.deepEqual(endpoint.event_types, ['*']);
      const listed = await client.webhooks.listEndpoints();
      assert.equal(listed.length, 1);
      assert.equal((listed[0] as Record<string, unknown>)['secret'], undefined, 'the secret is shown only at creation');
      assert.ok(!JSON.stringify(listed).includes(endpoint.secret.slice(6)));

      const member = (await client.members.create({ external_member_id: 'wh-1' })) as any;
      await deposit(client, 'wh-1', '100');
      const w = (await client.withdrawals.create(
        { asset: 'USDT', network: 'TRON', address: TRON, amount: '40' },
        { onBehalfOf: 'wh-1' },
      )) as any;
      await client.withdrawals.confirm(w.id);
      await pump(() => receiver.received.length >= 3);
      await sleep(50);
      assert.equal(receiver.received.length, 3, 'each event once');

      const bodies = receiver.received.map((r) => JSON.parse(r.body));
      assert.deepEqual(bodies.map((b) => b.event_type).sort(), [
        'deposit.credited',
        'withdrawal.locked',
        'withdrawal.settled',
      ]);
      const wh = new Webhook(endpoint.secret);
      for (const r of receiver.received) {
        assert.ok(
          verifyWebhookSignature({ secret: endpoint.secret, headers: r.headers, body: r.body }),
          'SDK verifies',
        );
        assert.deepEqual(
          wh.verify(r.body, r.headers as Record<string, string>),
          JSON.parse(r.body),
          'standardwebhooks verifies',
        );
        assert.equal(r.headers['content-type'], 'application/json');
        assert.match(String(r.headers['user-agent']), /^MerchantWalletAPI-Webhooks\//);
        assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
        assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
        const b = JSON.parse(r.body);
        assert.equal(r.headers['webhook-id'], b.event_id);
        assert.deepEqual(Object.keys(b).sort(), webhookBodyFields);
        assert.deepEqual(Object.keys(b.data).sort(), webhookDataFields);
        assert.match(b.event_id, /^evt_/);
        assert.equal(b.merchant_id, merchantId);
        assert.equal(b.livemode, false);
        assert.equal(b.data.external_member_id, 'wh-1');
        assert.ok(!/amount|asset|USDT|TRON|address|"40/.test(r.body), `no amounts, assets or addresses: ${r.body}`);
      }
      const settled = bodies.find((b) => b.event_type === 'withdrawal.settled');
      assert.deepEqual(settled.data, {
        object: 'withdrawal',
        id: w.id,
        external_member_id: 'wh-1',
        status: 'settled',
        status_version: 2,
      });
      assert.equal(member.external_member_id, 'wh-1');

      const log = await deliveries(client);
      assert.equal(log.length, 3);
      for (const d of log) {
        assert.deepEqual(Object.keys(d).sort(), [
          'attempts',
          'created_at',
          'event_id',
          'event_type',
          'id',
          'last_http_status',
          'next_attempt_at',
          'status',
        ]);
        assert.match(d.id, /^whd_/);
        assert.equal(d.status, 'sent');
        assert.equal(d.attempts, 1);
        assert.equal(d.last_http_status, 200);
        assert.equal(d.next_attempt_at, '');
      }
      assert.deepEqual(new Set(log.map((d) => d.event_id)), new Set(bodies.map((b) => b.event_id)));
      assert.equal((await deliveries(client, 'sent')).length, 3);
      assert.equal((await deliveries(client, 'dead')).length, 0);
      assert.equal((await deliveries(client, 'exploded')).length, 0, 'an unknown status filter gives an empty page');
      assert.equal((await deliveries(client, 'x'.repeat(500))).length, 0, 'of any length');
      const page = await client.request<any>({ method: 'GET', path: '/v1/webhooks/deliveries', query: { limit: 2 } });
      assert.equal(page.data.length, 2);
      assert.equal(page.has_more, true);
      const rest = await client.request<any>({
        method: 'GET',
        path: '/v1/webhooks/deliveries',
        query: { limit: 2, cursor: page.next_cursor },
      });
      assert.equal(rest.data.length, 1);
      assert.equal(rest.has_more, false);

      // Sent is final: a record made due again (as a stray schedule would) is not claimed, nothing is posted.
      await service.ctx.db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: sql<Date>`now()` })
        .where('id', '=', log[0]!.id)
        .execute();
      await service.workers.jobs.drain();
      await sleep(50);
      assert.equal(receiver.received.length, 3, 'no post after the record says sent');
      await expectCode(client.webhooks.redeliver(log[0]!.id), 'state_invalid', 400);
    });
  });

  it(
    "delivers the KYC profile's events (submitted, approved, updated) in the same envelope: ids and status " +
      'only, status_version rising',
    async () => {
      await withReceiver(async (receiver) => {
        const { client, merchantId } = await newMerchantClient(service);
        await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] });
        const member = (await client.members.create({ external_member_id: 'wh-kyc' })) as any;
        await client.hostedScreens.sandboxComplete(
          (await client.kyc.createSession({ onBehalfOf: member.id })).id,
          'submitted',
        );
        const approved = await client.kyc.sandboxReview('wh-kyc', { decision: 'approved', level: 2 });
        await client.hostedScreens.sandboxComplete(
          (await client.kyc.createProfileSession({ onBehalfOf: 'wh-kyc' })).id,
          'submitted',
        );
        await pump(() => receiver.received.length >= 3);
        await sleep(50);
        const bodies = receiver.received
          .map((r) => JSON.parse(r.body))
          .sort((a, b) => a.data.status_version - b.data.status_version);
        assert.deepEqual(
          bodies.map((b) => [b.event_type, b.data.status, b.data.status_version]),
          [
            ['kyc.profile.pending_review', 'pending_review', 1],
            ['kyc.profile.approved', 'approved', 2],
            ['kyc.profile.pending_review', 'pending_review', 3],
          ],
        );
        for (const b of bodies) {
          assert.deepEqual(Object.keys(b).sort(), webhookBodyFields);
          assert.match(b.event_id, /^evt_/);
          assert.match(b.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
          assert.deepEqual([b.merchant_id, b.livemode], [merchantId, false]);
          assert.deepEqual(Object.keys(b.data).sort(), webhookDataFields);
          assert.deepEqual(
            [b.data.object, b.data.id, b.data.external_member_id],
            ['kyc_profile', approved.id, 'wh-kyc'],
          );
        }
        assert.ok(
          !receiver.received.some((r) => /Sandbox|passport|birth|level/i.test(r.body)),
          'no personal data or level in the body',
        );
      });
    },
  );

  it(
    "the SDK's endpoint helpers: disable, enable, update, roll the secret, requeue, delete (typed as the " +
      'server answers)',
    async () => {
      const { client } = await newMerchantClient(service);
      const created = await client.webhooks.createEndpoint({
        url: 'http://127.0.0.1:9/hook',
        event_types: ['deposit.credited'],
      });
      const disabled = await client.webhooks.disableEndpoint(created.id);
      assert.deepEqual([disabled.status, disabled.disabled_reason], ['disabled', 'merchant']);
      assert.deepEqual(Object.keys(disabled).sort(), [
        'created_at',
        'disabled_reason',
        'event_types',
        'id',
        'status',
        'updated_at',
        'url',
      ]);
      const enabled = await client.webhooks.enableEndpoint(created.id.slice(4));
      assert.deepEqual([enabled.status, enabled.disabled_reason], ['enabled', '']);
      const updated = await client.webhooks.updateEndpoint(created.id, { event_types: ['*'] });
      assert.deepEqual(updated.event_types, ['*']);
      assert.deepEqual(await client.webhooks.listEndpoints(), [updated]);
      const rolled = await client.webhooks.rollSecret(created.id, { overlapSeconds: 0 });
      assert.match(rolled.secret, /^whsec_/);
      assert.notEqual(rolled.secret, created.secret);
      assert.equal(rolled.previous_secret_expires_at, '');
      const overlapping = await client.webhooks.rollSecret(created.id);
      assert.ok(Date.parse(overlapping.previous_secret_expires_at) > Date.now() - 60_000);
      assert.deepEqual(await client.webhooks.requeueDeliveries({ since: new Date(0), status: 'dead' }), {
        queued: 0,
        has_more: false,
      });
      assert.deepEqual(await client.webhooks.deleteEndpoint(created.id), { id: created.id, deleted: true });
      assert.deepEqual(await client.webhooks.deleteEndpoint(created.id), { id: created.id, deleted: true });
      assert.deepEqual(await client.webhooks.listEndpoints(), []);
    },
  );

  it('moves a failing delivery through failed to dead, redelivers it, and refuses sent and pending', async () => {
    await withStatusReceiver(500, async (receiver, answerWith) => {
      const { client } = await newMerchantClient(service);
      await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['deposit.credited'] });
      await fundedMember(client, '10', 'USDT', { external: 'fail-1' });
      await service.workers.tick();
      const [pending] = await deliveries(client);
      assert.equal(pending!.status, 'pending');
      assert.equal(pending!.attempts, 0);
      assert.notEqual(pending!.next_attempt_at, '');
      await expectCode(client.webhooks.redeliver(pending!.id), 'state_invalid', 400);

      await service.workers.jobs.drain();
      const [failed] = await deliveries(client);
      assert.equal(failed!.status, 'failed');
      assert.equal(failed!.attempts, 1);
      assert.equal(failed!.last_http_status, 500);
      assert.ok(Date.parse(failed!.next_attempt_at) > Date.parse(failed!.created_at));
      assert.equal((await deliveries(client, 'failed')).length, 1);
      const inspected = await admin(service, 'GET', `/admin/v1/webhooks/deliveries/${failed!.id}`);
      assert.equal(inspected.status, 200);
      assert.equal(inspected.body.last_error, 'HTTP 500');
      assert.equal(inspected.body.endpoint.status, 'enabled');
      assert.equal(inspected.body.endpoint.secret, undefined);
      assert.deepEqual(
        inspected.body.attempt_log.map((a: any) => [a.attempt, a.outcome, a.http_status]),
        [[1, 'failed', 500]],
      );
      assert.equal((await admin(service, 'GET', `/admin/v1/webhooks/deliveries/whd_${randomUUID()}`)).status, 404);

      // The first retry is a minute away on the merchant's clock: not before.
      await client.sandbox.advanceClock(retryMs / 1000 - 5);
      await service.workers.jobs.drain();
      assert.equal((await deliveries(client))[0]!.attempts, 1, 'not yet due');
      assert.equal(receiver.received.length, 1);
      // The sandbox clock passes the three retries (no waiting): they have run when the advance answers.
      await client.sandbox.advanceClock((3 * retryMs) / 1000);
      const [dead] = await deliveries(client);
      assert.equal(dead!.status, 'dead');
      assert.equal(dead!.attempts, 4, 'schedule of three delays: four attempts, then dead');
      const log = await admin(service, 'GET', `/admin/v1/webhooks/deliveries/${dead!.id}`);
      assert.deepEqual(log.body.attempt_log.map((a: any) => [a.attempt, a.outcome, a.http_status]).sort(), [
        [1, 'failed', 500],
        [2, 'failed', 500],
        [3, 'failed', 500],
        [4, 'failed', 500],
      ]);
      assert.equal(dead!.next_attempt_at, '');
      assert.equal(receiver.received.length, 4);

      answerWith(200);
      const key = randomUUID();
      const queued = await client.webhooks.redeliver(dead!.id.replace(/^whd_/, ''), { idempotencyKey: key });
      assert.deepEqual(queued, { id: dead!.id, queued: true });
      const replay = await client.requestRaw({
        method: 'POST',
        path: `/v1/webhooks/deliveries/${dead!.id.replace(/^whd_/, '')}/redeliver`,
        idempotencyKey: key,
      });
      assert.equal(replay.headers['x-idempotent-replay'], 'true');
      await pump(async () => (await deliveries(client))[0]!.status === 'sent');
      const [sent] = await deliveries(client);
      assert.equal(sent!.attempts, 5);
      assert.equal(sent!.last_http_status, 200);
      assert.equal(receiver.received.length, 5);
      await expectCode(client.webhooks.redeliver(sent!.id), 'state_invalid', 400);

      const other = await newMerchantClient(service);
      await expectCode(other.client.webhooks.redeliver(sent!.id), 'not_found', 404);
      await expectCode(client.webhooks.redeliver(`whd_${randomUUID()}`), 'not_found', 404);
      const noKey = await client.requestRaw({
        method: 'POST',
        path: `/v1/webhooks/deliveries/${sent!.id}/redeliver`,
        idempotencyKey: false,
      });
      assert.equal(noKey.body.code, 'idempotency_key_required');
    });
  });

  it(
    'records no_subscriber when nobody listens and binds it on redelivery to the endpoints that match ' + 'now',
    async () => {
      await withReceiver(async (receiver) => {
        const { client } = await newMerchantClient(service);
        await fundedMember(client, '10', 'USDT', { external: 'nosub' });
        await pump(async () => (await deliveries(client)).length === 1);
        const [nosub] = await deliveries(client);
        assert.deepEqual(
          { ...nosub, id: '', event_id: '', created_at: '' },
          {
            id: '',
            event_id: '',
            created_at: '',
            event_type: 'deposit.credited',
            status: 'no_subscriber',
            attempts: 0,
            last_http_status: 0,
            next_attempt_at: '',
          },
        );
        await expectCode(client.webhooks.redeliver(nosub!.id), 'state_invalid', 400);
        await client.webhooks.createEndpoint({ url: receiver.url('/settled'), event_types: ['withdrawal.settled'] });
        await expectCode(client.webhooks.redeliver(nosub!.id), 'state_invalid', 400);

        await client.webhooks.createEndpoint({ url: receiver.url('/all'), event_types: ['*'] });
        await client.webhooks.createEndpoint({
          url: receiver.url('/deposits'),
          event_types: ['deposit.credited', 'withdrawal.locked'],
        });
        assert.deepEqual(await client.webhooks.redeliver(nosub!.id), { id: nosub!.id, queued: true });
        await pump(() => receiver.received.length >= 2);
        await pump(async () => (await deliveries(client, 'sent')).length === 2);
        const log = await deliveries(client);
        assert.equal(log.length, 2, 'one record per matching endpoint; the original is one of them');
        assert.ok(log.some((d) => d.id === nosub!.id));
        assert.ok(log.every((d) => d.event_id === nosub!.event_id && d.status === 'sent'));
        assert.deepEqual(receiver.received.map((r) => r.path).sort(), ['/all', '/deposits']);
        assert.equal(
          await service.ctx.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('event_id', '=', nosub!.event_id)
            .where('endpoint_id', 'is', null)
            .executeTakeFirst(),
          undefined,
        );
      });
    },
  );

  it(
    'judges an event by the endpoints as they were at its time, though the fan-out runs later: created, ' +
      'enabled, resubscribed or deleted in between',
    async () => {
      await withReceiver(async (receiver) => {
        const { client } = await newMerchantClient(service);
        const sleeping = (await client.webhooks.createEndpoint({
          url: receiver.url('/sleeping'),
          event_types: ['*'],
        })) as any;
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${sleeping.id}`,
          body: { status: 'disabled' },
        });
        const narrow = (await client.webhooks.createEndpoint({
          url: receiver.url('/narrow'),
          event_types: ['withdrawal.settled'],
        })) as any;
        const leaving = (await client.webhooks.createEndpoint({
          url: receiver.url('/leaving'),
          event_types: ['deposit.credited'],
        })) as any;
        await client.members.create({ external_member_id: 'then' });
        // The event happens; before the fan-out runs (no worker runs in tests until pumped), every
        // endpoint changes: one is created, one enabled, one widened to the event's type, one deleted.
        const before = await deposit(client, 'then');
        await client.webhooks.createEndpoint({ url: receiver.url('/late'), event_types: ['*'] });
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${sleeping.id}`,
          body: { status: 'enabled' },
        });
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${narrow.id}`,
          body: { event_types: ['*'] },
        });
        await client.webhooks.deleteEndpoint(leaving.id);
        const after = await deposit(client, 'then');
        await pump(async () => {
          const l = await deliveries(client);
          return l.length === 4 && l.every((d) => d.status === 'sent' || d.status === 'dead');
        });
        const log = await deliveries(client);
        const eventIds = new Map(
          (
            await service.ctx.db
              .selectFrom('events')
              .select(['id', 'object_id'])
              .where('object_id', 'in', [before.id, after.id])
              .execute()
          ).map((e) => [e.object_id, e.id]),
        );
        const of = (dep: { id: string }) => log.filter((d) => d.event_id === eventIds.get(dep.id));
        // Only the endpoint deleted since was enabled and subscribed at the first event's time: its record goes dead
        // unsent.
        assert.deepEqual(
          of(before).map((d) => d.status),
          ['dead'],
        );
        const endpointOf = async (id: string) => (await rowById(service, 'webhook_deliveries', id)).endpoint_id;
        assert.equal(await endpointOf(of(before)[0]!.id), leaving.id);
        assert.deepEqual(
          of(after)
            .map((d) => d.status)
            .sort(),
          ['sent', 'sent', 'sent'],
        );
        assert.deepEqual(
          receiver.received.map((r) => r.path).sort(),
          ['/late', '/narrow', '/sleeping'],
          'the second event reached the three endpoints that take it now; the first reached none',
        );

        // An event with no endpoint at its time is no_subscriber, even if one is created before the fan-out.
        const { client: other } = await newMerchantClient(service);
        await fundedMember(other, '10', 'USDT', { external: 'first' });
        await other.webhooks.createEndpoint({ url: receiver.url('/other'), event_types: ['*'] });
        await pump(async () => (await deliveries(other)).length === 1);
        assert.equal((await deliveries(other))[0]!.status, 'no_subscriber');
        assert.equal(receiver.received.filter((r) => r.path === '/other').length, 0);
      });
    },
  );

  it(
    'times the changes of one endpoint in the order they take effect, whatever time their transactions began ' +
      '(PostgreSQL)',
    async (t) => {
      if (service.ctx.databaseKind !== 'postgres') return t.skip('one connection: transactions take turns');
      const { client, merchantId } = await newMerchantClient(service);
      const receiver = await startReceiver();
      const ep = (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
      await receiver.close();
      let begun: () => void = () => {};
      const isBegun = new Promise<void>((r) => (begun = r));
      let release: () => void = () => {};
      const released = new Promise<void>((r) => (release = r));
      // A change whose transaction began before another change of the endpoint took effect.
      const early = service.ctx.db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        begun();
        await released;
        await updateEndpoint(trx, { merchantId, environment: 'sandbox' }, ep.id, { status: 'disabled' }, new Date());
      });
      await isBegun;
      await client.request({
        method: 'PATCH',
        path: `/v1/webhooks/endpoints/${ep.id}`,
        body: { event_types: ['withdrawal.settled'] },
      });
      release();
      await early;
      const changes = await service.ctx.db
        .selectFrom('webhook_endpoint_changes')
        .select(['valid_from', 'prev_status', 'prev_event_types'])
        .where('endpoint_id', '=', ep.id)
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        changes.map((c) => [c.prev_status, c.prev_event_types]),
        [
          [null, null],
          ['enabled', ['*']],
          ['enabled', ['withdrawal.settled']],
        ],
      );
      const times = changes.map((c) => c.valid_from.getTime());
      assert.ok(times[1]! <= times[2]!, `the later change is timed after the earlier one: ${times.join(', ')}`);
    },
  );

  it(
    'a failing record of an event type the endpoint no longer subscribes to (event_types narrowed) goes dead ' +
      'at its next retry without a request',
    async () => {
      await withStatusReceiver(500, async (receiver, answerWith) => {
        const { client } = await newMerchantClient(service);
        const ep = (await client.webhooks.createEndpoint({
          url: receiver.url(),
          event_types: ['deposit.credited', 'withdrawal.locked'],
        })) as any;
        await fundedMember(client, '10', 'USDT', { external: 'narrowed' });
        await service.workers.tick();
        await service.workers.jobs.drain();
        assert.equal((await deliveries(client))[0]!.status, 'failed');
        assert.equal(receiver.received.length, 1);
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { event_types: ['withdrawal.locked'] },
        });
        await client.sandbox.advanceClock(retryMs / 1000);
        const [dead] = await deliveries(client);
        assert.equal(dead!.status, 'dead');
        assert.equal(dead!.attempts, 1, 'no attempt after the narrowing');
        assert.equal(receiver.received.length, 1, 'the receiver got nothing more');
        assert.equal(
          (await admin(service, 'GET', `/admin/v1/webhooks/deliveries/${dead!.id}`)).body.last_error,
          'endpoint no longer subscribes to the event type',
        );
        // While narrowed, neither redeliver nor requeue takes it (it would only go dead again unsent).
        const refused = (await expectCode(
          client.webhooks.redeliver(dead!.id),
          'state_invalid',
          400,
        )) as MerchantWalletError;
        assert.match(refused.message, /no longer subscribes to deposit\.credited/);
        assert.deepEqual(await client.webhooks.requeueDeliveries({ since: new Date(0) }), {
          queued: 0,
          has_more: false,
        });
        assert.equal((await deliveries(client))[0]!.status, 'dead');
        // Widened again: the record can be redelivered and is sent.
        answerWith(200);
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { event_types: ['*'] },
        });
        assert.deepEqual(await client.webhooks.redeliver(dead!.id), { id: dead!.id, queued: true });
        await pump(async () => (await deliveries(client))[0]?.status === 'sent');
        assert.equal(receiver.received.length, 2);
      });
    },
  );

  it(
    'disables an endpoint that answers 410 Gone, with an operator alert; a disabled endpoint gets no request; ' +
      're-enable and requeue',
    async () => {
      await withStatusReceiver(410, async (receiver, answerWith) => {
        const since = new Date().toISOString();
        const { client, merchantId } = await newMerchantClient(service);
        const ep = (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
        await fundedMember(client, '10', 'USDT', { external: 'gone' });
        await pump(async () => (await deliveries(client))[0]?.status === 'dead');
        const [gone] = await deliveries(client);
        assert.equal(gone!.last_http_status, 410);
        assert.equal(gone!.attempts, 1, '410 is final at once');
        const [endpoint] = await client.webhooks.listEndpoints();
        assert.equal(endpoint!.status, 'disabled');
        assert.equal(endpoint!.disabled_reason, 'gone');
        const alerts = await service.ctx.db
          .selectFrom('operator_alerts')
          .selectAll()
          .where('merchant_id', '=', merchantId)
          .execute();
        assert.deepEqual(
          alerts.map((a) => [a.kind, a.object_id]),
          [['webhook.endpoint_disabled', ep.id]],
        );
        // Redelivering a record of a disabled endpoint is refused (it would go straight back to dead with no
        // attempt).
        const refused = await expectCode(client.webhooks.redeliver(gone!.id), 'state_invalid', 400);
        assert.match(
          (refused as MerchantWalletError).body.message as string,
          /endpoint of this delivery is disabled \(gone\)/,
        );
        assert.equal((await deliveries(client))[0]!.status, 'dead', 'the refused record is unchanged');

        // New events find no enabled endpoint.
        await deposit(client, 'gone');
        await pump(async () => (await deliveries(client)).length === 2);
        assert.equal((await deliveries(client))[0]!.status, 'no_subscriber');

        // Records already planned for an endpoint disabled in the meantime go dead without a request.
        answerWith(200);
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { status: 'enabled' },
        });
        await deposit(client, 'gone');
        await deposit(client, 'gone');
        await service.workers.tick();
        const disabled = await client.request<any>({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { status: 'disabled' },
        });
        assert.equal(disabled.status, 'disabled');
        assert.equal(disabled.disabled_reason, 'merchant');
        await pump(async () => (await deliveries(client, 'dead')).length === 3);
        assert.equal(receiver.received.length, 1, 'only the 410 attempt reached the receiver');
        assert.deepEqual((await deliveries(client, 'dead')).map((d) => d.attempts).sort(), [0, 0, 1]);

        const whileDisabled = await client.request<any>({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since },
        });
        assert.deepEqual(whileDisabled, { queued: 0, has_more: false }, 'nothing of a disabled endpoint is requeued');
        const enabled = await client.request<any>({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { status: 'enabled' },
        });
        assert.deepEqual([enabled.status, enabled.disabled_reason], ['enabled', '']);
        const future = await client.request<any>({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since: new Date(Date.now() + 60_000).toISOString() },
        });
        assert.deepEqual(future, { queued: 0, has_more: false });
        const failedOnly = await client.request<any>({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since, status: 'failed' },
        });
        assert.equal(failedOnly.queued, 0);
        const requeued = await client.request<any>({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since },
        });
        assert.deepEqual(requeued, { queued: 3, has_more: false });
        await pump(async () => (await deliveries(client, 'sent')).length === 3);
        assert.equal(receiver.received.length, 4);
        assert.equal(
          (await deliveries(client, 'no_subscriber')).length,
          1,
          'requeue leaves no_subscriber records alone',
        );
        const bad = await client.requestRaw({
          method: 'POST',
          path: '/v1/webhooks/deliveries/requeue',
          body: { since: 'yesterday' },
        });
        assert.equal(bad.body.code, 'invalid_request');
      });
    },
  );

  it('disables an endpoint whose attempts have all failed for the configured window (3 days by default)', async () => {
    await withReceiver(
      () => 503,
      async (receiver) => {
        const { client, merchantId } = await newMerchantClient(service);
        await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] });
        await fundedMember(client, '10', 'USDT', { external: 'streak' });
        await pump(async () => (await deliveries(client))[0]?.status === 'failed');
        assert.equal((await client.webhooks.listEndpoints())[0]!.status, 'enabled', 'one failure is no reason');
        // Three days pass on the merchant's clock (not waited for): the retries run out on the way, at its start.
        await client.sandbox.advanceClock(3 * 86_400);
        assert.equal((await deliveries(client))[0]!.status, 'dead');
        assert.equal((await client.webhooks.listEndpoints())[0]!.status, 'enabled', 'no attempt has failed since');
        // The next failure comes three days into the streak: the endpoint is disabled.
        await deposit(client, 'streak');
        await pump(async () => (await client.webhooks.listEndpoints())[0]!.status === 'disabled');
        assert.equal((await client.webhooks.listEndpoints())[0]!.disabled_reason, 'failing');
        const alert = await service.ctx.db
          .selectFrom('operator_alerts')
          .selectAll()
          .where('merchant_id', '=', merchantId)
          .executeTakeFirstOrThrow();
        assert.equal(alert.kind, 'webhook.endpoint_disabled');
        // Its retry, when the clock gets there, finds the endpoint disabled: dead, without a request.
        const requests = receiver.received.length;
        await client.sandbox.advanceClock(retryMs / 1000);
        assert.equal((await deliveries(client))[0]!.status, 'dead');
        assert.equal(receiver.received.length, requests);
      },
    );
  });

  it('rolls the secret: both signatures during the overlap, each verifies; overlap 0 drops the old one', async () => {
    await withReceiver(async (receiver) => {
      const { client } = await newMerchantClient(service);
      const ep = (await client.webhooks.createEndpoint({
        url: receiver.url(),
        event_types: ['deposit.credited'],
      })) as any;
      const key = randomUUID();
      const rolled = await client.request<any>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${ep.id}/roll-secret`,
        body: { overlap_seconds: 3600 },
        idempotencyKey: key,
      });
      assert.match(rolled.secret, /^whsec_/);
      assert.notEqual(rolled.secret, ep.secret);
      assert.ok(Math.abs(Date.parse(rolled.previous_secret_expires_at) - Date.now() - 3_600_000) < 60_000);
      const again = await client.request<any>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${ep.id}/roll-secret`,
        body: { overlap_seconds: 3600 },
        idempotencyKey: key,
      });
      assert.equal(again.secret, rolled.secret, 'a retry with the same key replays the same secret');
      await fundedMember(client, '10', 'USDT', { external: 'roll' });
      await pump(() => receiver.received.length === 1);
      const first = receiver.received[0]!;
      const sigs = String(first.headers['webhook-signature']).split(' ');
      assert.equal(sigs.length, 2);
      for (const secret of [ep.secret, rolled.secret]) {
        assert.ok(verifyWebhookSignature({ secret, headers: first.headers, body: first.body }));
        assert.doesNotThrow(() => new Webhook(secret).verify(first.body, first.headers as Record<string, string>));
      }

      const tooLong = await client.requestRaw({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${ep.id}/roll-secret`,
        body: { overlap_seconds: 8 * 86_400 },
      });
      assert.equal(tooLong.body.code, 'invalid_request');
      const dropped = await client.request<any>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${ep.id}/roll-secret`,
        body: { overlap_seconds: 0 },
      });
      assert.equal(dropped.previous_secret_expires_at, '');
      const defaulted = await client.request<any>({
        method: 'POST',
        path: `/v1/webhooks/endpoints/${ep.id}/roll-secret`,
      });
      assert.ok(
        Math.abs(Date.parse(defaulted.previous_secret_expires_at) - Date.now() - 86_400_000) < 60_000,
        'default overlap 86400 s',
      );
      await service.ctx.db
        .updateTable('webhook_endpoints')
        .set({ previous_secret_expires_at: new Date(Date.now() - 1) })
        .where('id', '=', ep.id)
        .execute();
      await deposit(client, 'roll');
      await pump(() => receiver.received.length === 2);
      const second = receiver.received[1]!;
      assert.equal(
        String(second.headers['webhook-signature']).split(' ').length,
        1,
        'the overlap ended: one signature',
      );
      assert.ok(verifyWebhookSignature({ secret: defaulted.secret, headers: second.headers, body: second.body }));
      for (const old of [ep.secret, rolled.secret, dropped.secret])
        assert.ok(!verifyWebhookSignature({ secret: old, headers: second.headers, body: second.body }));
      await expectCode(
        client.request({ method: 'POST', path: `/v1/webhooks/endpoints/whe_${randomUUID()}/roll-secret` }),
        'not_found',
        404,
      );
    });
  });

  it(
    'refuses internal targets in production, at creation and again at delivery, and accepts loopback http in ' +
      'the sandbox',
    async () => {
      await withReceiver(async (receiver) => {
        const merchantId = await createMerchant(service);
        const prod = await approvedProductionClient(service, merchantId);
        const refused: Array<[string, string]> = [
          [receiver.url(), 'https_required'],
          [`https://127.0.0.1:${receiver.port}/hook`, 'loopback_address'],
          ['https://10.0.0.1/hook', 'private_address'],
          ['https://172.20.1.1/hook', 'private_address'],
          ['https://192.168.0.10/hook', 'private_address'],
          ['https://100.64.1.1/hook', 'private_address'],
          ['https://169.254.169.254/latest/meta-data', 'metadata_address'],
          ['https://[fd00:ec2::254]/', 'metadata_address'],
          ['https://169.254.10.10/', 'link_local_address'],
          ['https://localhost/hook', 'loopback_address'],
          ['https://[::1]/hook', 'loopback_address'],
          ['https://[::ffff:127.0.0.1]/hook', 'loopback_address'],
          ['https://0.0.0.0/', 'unspecified_address'],
          ['https://224.0.0.1/', 'multicast_address'],
          ['https://user:pass@example.com/', 'credentials_not_allowed'],
        ];
        for (const [url, reason] of refused) {
          const err = await expectCode(
            prod.webhooks.createEndpoint({ url, event_types: ['*'] }),
            'invalid_fields',
            400,
          );
          assert.deepEqual((err as MerchantWalletError).body.fields, [{ key: 'url', reason }], url);
        }
        assert.deepEqual(await prod.webhooks.listEndpoints(), []);

        // The sandbox accepts loopback http (local development) but never metadata addresses.
        const { client: sandbox } = await newMerchantClient(service);
        const local = (await sandbox.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
        assert.equal(local.status, 'enabled');
        const meta = await expectCode(
          sandbox.webhooks.createEndpoint({ url: 'http://169.254.169.254/', event_types: ['*'] }),
          'invalid_fields',
          400,
        );
        assert.deepEqual((meta as MerchantWalletError).body.fields, [{ key: 'url', reason: 'metadata_address' }]);

        // A production endpoint that points inside (e.g. its DNS changed since it was saved) is checked again at
        // delivery: the attempt fails and no request is sent. The row is written directly, as a DNS change would.
        await service.ctx.db
          .insertInto('webhook_endpoints')
          .values({
            id: `whe_${randomUUID()}`,
            merchant_id: merchantId,
            environment: 'production',
            url: `https://127.0.0.1:${receiver.port}/prod`,
            event_types: JSON.stringify(['*']),
            secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmU=',
            previous_secret: null,
            previous_secret_expires_at: null,
            status: 'enabled',
            failing_since: null,
            updated_at: new Date(),
          })
          .execute();
        await fundedMember(prod, '1', 'USDT', { external: 'prod-1' });
        await pump(async () => (await deliveries(prod))[0]?.status === 'failed');
        const [refusedDelivery] = await deliveries(prod);
        assert.equal(refusedDelivery!.attempts, 1);
        assert.equal(refusedDelivery!.last_http_status, 0);
        const attempt = await service.ctx.db
          .selectFrom('webhook_delivery_attempts')
          .selectAll()
          .where('delivery_id', '=', refusedDelivery!.id)
          .executeTakeFirstOrThrow();
        assert.equal(attempt.outcome, 'refused');
        assert.match(attempt.error, /loopback_address/);
        assert.ok(!receiver.received.some((r) => r.path === '/prod'), 'no request reached the internal address');
        // Production records have no sandbox clock: each retry is made due directly, as the passing time would.
        for (let retry = 0; retry < 3; retry++) {
          await service.ctx.db
            .updateTable('webhook_deliveries')
            .set({ next_attempt_at: sql<Date>`now()` })
            .where('id', '=', refusedDelivery!.id)
            .execute();
          await service.workers.jobs.drain();
        }
        const [deadDelivery] = await deliveries(prod);
        assert.deepEqual([deadDelivery!.status, deadDelivery!.attempts], ['dead', 4]);
        assert.ok(!receiver.received.some((r) => r.path === '/prod'));
      });
    },
  );

  it(
    'manages endpoints: validation, update, delete (naturally idempotent), bound per environment, ' + 'scopes',
    async () => {
      await withReceiver(async (receiver) => {
        const { client, merchantId } = await newMerchantClient(service);
        for (const [body, field, reason] of [
          [{ url: receiver.url(), event_types: ['Withdrawal.Settled'] }, 'event_types', 'invalid_event_type'],
          [{ url: receiver.url(), event_types: ['withdrawal'] }, 'event_types', 'invalid_event_type'],
          [
            { url: receiver.url(), event_types: ['deposit.credited', 'card.topup.credit'] },
            'event_types',
            'unknown_event_type',
          ],
          [{ url: 'not a url', event_types: ['*'] }, 'url', 'invalid_url'],
        ] as const) {
          const err = await expectCode(client.webhooks.createEndpoint(body as any), 'invalid_fields', 400);
          assert.deepEqual((err as MerchantWalletError).body.fields, [{ key: field, reason }]);
        }
        const typo = await expectCode(
          client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['card.topup.credit'] }),
          'invalid_fields',
          400,
        );
        assert.match(
          (typo as MerchantWalletError).body.message as string,
          /"card\.topup\.credit"/,
          'the message names the entry',
        );
        await expectCode(
          client.webhooks.createEndpoint({ url: receiver.url(), event_types: [] }),
          'invalid_request',
          400,
        );
        await expectCode(
          client.request({ method: 'POST', path: '/v1/webhooks/endpoints', body: { url: receiver.url() } }),
          'invalid_request',
          400,
        );
        const noKey = await client.requestRaw({
          method: 'POST',
          path: '/v1/webhooks/endpoints',
          body: { url: receiver.url(), event_types: ['*'] },
          idempotencyKey: false,
        });
        assert.equal(noKey.body.code, 'idempotency_key_required');

        const ep = (await client.webhooks.createEndpoint({
          url: receiver.url(),
          event_types: ['qrpay.order.completed', 'withdrawal.settled', 'withdrawal.settled'],
        })) as any;
        assert.deepEqual(ep.event_types, ['qrpay.order.completed', 'withdrawal.settled']);
        const patched = await client.request<any>({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id.slice(4)}`,
          body: { event_types: ['deposit.credited'], url: receiver.url('/v2') },
        });
        assert.deepEqual(
          [patched.url, patched.event_types, patched.secret],
          [receiver.url('/v2'), ['deposit.credited'], undefined],
        );
        await expectCode(
          client.request({
            method: 'PATCH',
            path: `/v1/webhooks/endpoints/${ep.id}`,
            body: { url: 'http://169.254.169.254/' },
          }),
          'invalid_fields',
          400,
        );
        await expectCode(
          client.request({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: {} }),
          'invalid_request',
          400,
        );
        await expectCode(
          client.request({
            method: 'PATCH',
            path: `/v1/webhooks/endpoints/${ep.id}`,
            body: { event_types: ['withdrawal.setled'] },
          }),
          'invalid_fields',
          400,
        );
        const wildcard = await client.request<any>({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { event_types: ['withdrawal.settled', '*'] },
        });
        assert.deepEqual(wildcard.event_types, ['*'], '`*` anywhere still means every event');
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${ep.id}`,
          body: { event_types: ['deposit.credited'] },
        });
        await expectCode(
          client.request({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: { status: 'deleted' } }),
          'invalid_request',
          400,
        );

        // A record planned before the deletion ends dead, without a request.
        await fundedMember(client, '10', 'USDT', { external: 'del' });
        await service.workers.tick();
        assert.deepEqual(await client.webhooks.deleteEndpoint(ep.id), { id: ep.id, deleted: true });
        assert.deepEqual(
          await client.webhooks.deleteEndpoint(ep.id),
          { id: ep.id, deleted: true },
          'a repeat answers the same',
        );
        assert.deepEqual(await client.webhooks.listEndpoints(), []);
        const row = await service.ctx.db
          .selectFrom('webhook_endpoints')
          .select(['secret', 'status'])
          .where('id', '=', ep.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { secret: '', status: 'deleted' }, 'the secret is wiped');
        await pump(async () => (await deliveries(client))[0]?.status === 'dead');
        assert.equal(receiver.received.length, 0);
        const ofDeleted = await expectCode(
          client.webhooks.redeliver((await deliveries(client))[0]!.id),
          'state_invalid',
          400,
        );
        assert.match((ofDeleted as MerchantWalletError).body.message as string, /was deleted/);
        await expectCode(client.webhooks.deleteEndpoint(`whe_${randomUUID()}`), 'not_found', 404);
        await expectCode(
          client.request({ method: 'PATCH', path: `/v1/webhooks/endpoints/${ep.id}`, body: { status: 'enabled' } }),
          'not_found',
          404,
        );
        const other = await newMerchantClient(service);
        const mine = (await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] })) as any;
        await expectCode(other.client.webhooks.deleteEndpoint(mine.id), 'not_found', 404);

        for (let i = 1; i < 20; i++)
          await client.webhooks.createEndpoint({ url: receiver.url(`/n${i}`), event_types: ['*'] });
        await expectCode(
          client.webhooks.createEndpoint({ url: receiver.url('/21'), event_types: ['*'] }),
          'limit_exceeded',
          400,
        );
        assert.equal((await client.webhooks.listEndpoints()).length, 20);

        const readOnly = await keyClient(service, merchantId, { scopes: ['webhooks:read'] });
        assert.equal((await readOnly.webhooks.listEndpoints()).length, 20);
        await expectCode(
          readOnly.webhooks.createEndpoint({ url: receiver.url(), event_types: ['*'] }),
          'insufficient_scope',
          403,
        );
        await expectCode(all(readOnly.webhooks.deliveries()), 'insufficient_scope', 403);
        const logReader = await keyClient(service, merchantId, { scopes: ['merchant:read'] });
        assert.ok((await all(logReader.webhooks.deliveries())).length >= 1);
        await expectCode(logReader.webhooks.listEndpoints(), 'insufficient_scope', 403);
        await expectCode(
          client.request({ method: 'GET', path: '/v1/webhooks/deliveries', onBehalfOf: 'del' }),
          'invalid_request',
          400,
        );
      });
    },
  );

  it('connects to the address that was checked, never resolving the name again', async () => {
    await withReceiver(
      () => 204,
      async (receiver) => {
        // `.invalid` never resolves: the request can only arrive through the pinned address.
        const result = await postOnce(
          new URL(`http://pinned.invalid:${receiver.port}/pin`),
          { address: '127.0.0.1', family: 4 },
          { 'content-type': 'application/json' },
          Buffer.from('{}'),
        );
        assert.deepEqual(result, { kind: 'response', httpStatus: 204 });
        assert.equal(receiver.received[0]!.headers.host, `pinned.invalid:${receiver.port}`);
        const refused = await postOnce(
          new URL('http://127.0.0.1:1/'),
          { address: '127.0.0.1', family: 4 },
          {},
          Buffer.from('{}'),
        );
        assert.equal(refused.kind, 'network');
      },
    );
  });

  it(
    'takes over a record whose attempt was cut (its process died) once the lease ends, and marks that attempt ' +
      'abandoned',
    async () => {
      await withReceiver(async (receiver) => {
        // As a claim by a process that then died would leave it: one attempt in flight under a live lease.
        const { client, d } = await cutDelivery(receiver, 'lost', sql<Date>`now() + interval '1 hour'`);
        const db = service.ctx.db;
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 0, 'nothing is sent while the lease holds');
        await db
          .updateTable('webhook_deliveries')
          .set({ lease_until: sql<Date>`now() - interval '1 second'` })
          .where('id', '=', d.id)
          .execute();
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 1);
        const [sent] = await deliveries(client);
        assert.deepEqual([sent!.status, sent!.attempts], ['sent', 2]);
        const attempts = await attemptOutcomes(d.id);
        assert.deepEqual(attempts, [
          { attempt: 1, outcome: 'abandoned' },
          { attempt: 2, outcome: 'sent' },
        ]);
        // A job an earlier version queued for the record ends without effect.
        await enqueue(db, {
          kind: 'webhook.deliver',
          payload: { delivery_id: d.id, generation: 0 },
          dedupeKey: `old-${randomUUID()}`,
        });
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 1);
        assert.equal(
          await db.selectFrom('jobs').select('id').where('kind', '=', 'webhook.deliver').executeTakeFirst(),
          undefined,
        );
      });
    },
  );

  it(
    'marks a cut attempt abandoned when its record goes dead because the endpoint was disabled meanwhile ' +
      '(never in flight forever)',
    async () => {
      await withReceiver(async (receiver) => {
        // As a claim by a process that then died would leave it, its lease already over.
        const { client, endpoint, d } = await cutDelivery(
          receiver,
          'lost-disabled',
          sql<Date>`now() - interval '1 second'`,
        );
        await client.request({
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${endpoint.id}`,
          body: { status: 'disabled' },
        });
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 0);
        const [dead] = await deliveries(client);
        assert.equal(dead!.status, 'dead');
        const attempts = await attemptOutcomes(d.id);
        assert.deepEqual(attempts, [{ attempt: 1, outcome: 'abandoned' }]);
      });
    },
  );

  it('fans each event out exactly once, even with several fan-outs at the same time', async () => {
    const { client, merchantId } = await newMerchantClient(service);
    await withReceiver(async (receiver) => {
      await client.webhooks.createEndpoint({ url: receiver.url('/a'), event_types: ['*'] });
      await client.webhooks.createEndpoint({ url: receiver.url('/b'), event_types: ['kyc.profile.approved'] });
      await client.webhooks.createEndpoint({ url: receiver.url('/c'), event_types: ['kyc.profile.rejected'] });
      // Enough events for several batches of every run below (6 runs of batches of 7 or 2 events).
      const events = 48;
      const ids: string[] = [];
      await service.ctx.db.transaction().execute(async (trx) => {
        for (let i = 0; i < events; i++) {
          ids.push(
            await recordEvent(trx, {
              merchantId,
              environment: 'sandbox',
              type: i % 2 ? 'kyc.profile.approved' : 'kyc.profile.rejected',
              object: 'kyc_profile',
              objectId: `thg_${i}`,
              externalMemberId: '',
              status: 'happened',
              statusVersion: 1,
            }),
          );
        }
      });
      const runs = await Promise.all(
        Array.from({ length: 6 }, async (_, k) => {
          let n = 0;
          // Half the runs also meet the bound on records per batch (2 records per event here: 2 events a batch).
          for (let i = 0; i < 20; i++) {
            const batch = await fanOutBatch(service.ctx.db, 7, k % 2 ? 5 : undefined);
            assert.ok(k % 2 === 0 || batch <= 2, `records bound: ${batch} events`);
            n += batch;
          }
          return n;
        }),
      );
      assert.ok(runs.reduce((a, b) => a + b, 0) >= events);
      const { rows } = await sql<{ event_id: string; n: string }>`
        SELECT event_id, count(*)::text AS n FROM webhook_deliveries WHERE event_id = ANY(${sql.val(ids)}::text[])
          GROUP BY event_id
      `.execute(service.ctx.db);
      assert.equal(rows.length, events);
      assert.ok(
        rows.every((r) => r.n === '2'),
        'two matching endpoints each: /a and the type-specific one',
      );
      const undispatched = await sql<{ n: string }>`
        SELECT count(*)::text AS n FROM events e JOIN webhook_fan_out_queue q ON q.event_seq = e.seq
        WHERE e.id = ANY(${sql.val(ids)}::text[])
      `.execute(service.ctx.db);
      assert.equal(undispatched.rows[0]!.n, '0');
      // a loaded 2-core machine may need more than the default bound
      await pump(() => receiver.received.length >= 2 * events, 60_000);
      const perPath = new Map<string, number>();
      for (const r of receiver.received) perPath.set(r.path, (perPath.get(r.path) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries(perPath), { '/a': events, '/b': events / 2, '/c': events / 2 });
    });
  });
});
