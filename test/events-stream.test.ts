import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { streamsPerKeyMax } from '../src/modules/events/stream.js';
import { recordEvent } from '../src/events/outbox.js';
import {
  admin,
  baseUrlFor,
  clientFor,
  createKey,
  createMerchant,
  newMerchantClient,
  startTestService,
  useTestService,
  postgresOnly,
  keyClient,
} from './support/service.js';
import { openSse } from './support/sse.js';
import type { Database } from '../src/db/schema.js';

/*
 * GET /v1/events/stream (extensions 11, docs/events.md): live events, type filter, resume with
 * Last-Event-ID after a dropped connection (nothing lost or repeated), the per-key bound, the
 * keep-alive comment, the drain. Across processes: events-stream-process.test.ts.
 */

let service: RunningService;
let client: MerchantWalletClient;
let merchantId: string;
useTestService(
  { config: { workers: false, eventStreamKeepAliveMs: 200 } },
  (s) => ({ service, client, merchantId } = s),
);

async function member(c: MerchantWalletClient): Promise<string> {
  const external = `st-${randomUUID()}`;
  await c.members.create({ external_member_id: external });
  return external;
}
const deposit = (c: MerchantWalletClient, external: string) =>
  c.deposits.create({ member_id: external, asset: 'USDT', amount: '5', tx_hash: `t-${randomUUID()}` }) as Promise<{
    id: string;
  }>;

/** The tests that hold one transaction open while others commit: the embedded database runs one at a time. */
const besideAnOpenTransaction = { skip: postgresOnly('the embedded database runs one transaction at a time') };

/**
 * A transaction that runs `work`, then stays open until `release()`: `open` resolves once `work` is done,
 * `ended` once the transaction has committed.
 */
function heldTransaction(work: (trx: Transaction<Database>) => Promise<unknown>) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let workDone!: () => void;
  const open = new Promise<void>((r) => (workDone = r));
  const ended = service.ctx.db.transaction().execute(async (trx) => {
    await work(trx);
    workDone();
    await held;
  });
  return { open, release, ended };
}

describe('GET /v1/events/stream', () => {
  it('sends each new event as id, event and data (the Event object), with keep-alive comments', async () => {
    const external = await member(client);
    const sse = await openSse(baseUrlFor(service, 'sandbox'), await client.getToken(), '/v1/events/stream');
    const intruder = await newMerchantClient(service);
    const other = await openSse(baseUrlFor(service, 'sandbox'), await intruder.client.getToken(), '/v1/events/stream');
    try {
      assert.equal(sse.status, 200, sse.body);
      assert.match(String(sse.headers['content-type']), /^text\/event-stream/);
      assert.match(String(sse.headers['x-request-id']), /^req_/);
      const d1 = await deposit(client, external);
      const d2 = await deposit(client, external);
      const [e1, e2] = await sse.waitFor(2);
      assert.equal(e1!.event, 'deposit.credited');
      assert.deepEqual([JSON.parse(e1!.data).data.id, JSON.parse(e2!.data).data.id], [d1.id, d2.id]);
      assert.deepEqual(JSON.parse(e1!.data), await client.request({ method: 'GET', path: `/v1/events/${e1!.id}` }));
      assert.equal(other.events.length, 0, "another merchant's stream carries none of them");
      await new Promise((r) => setTimeout(r, 450));
      assert.ok(sse.comments.filter((c) => c === 'keep-alive').length >= 1, `comments: ${sse.comments.join(', ')}`);
      assert.equal(other.events.length, 0);
    } finally {
      sse.close();
      other.close();
    }
  });

  it('filters by type, and resumes after Last-Event-ID with nothing lost or repeated', async () => {
    const external = await member(client);
    const base = baseUrlFor(service, 'sandbox');
    const token = await client.getToken();
    const first = await openSse(base, token, '/v1/events/stream?type=deposit.*');
    const seen: string[] = [];
    const written: string[] = [];
    written.push((await deposit(client, external)).id, (await deposit(client, external)).id);
    await client.withdrawals.create(
      { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '1' },
      { onBehalfOf: external },
    );
    const got = await first.waitFor(2);
    seen.push(...got.map((e) => JSON.parse(e.data).data.id));
    first.close();
    await first.ended;
    // Written while no stream is connected, then more after the reconnect.
    written.push((await deposit(client, external)).id, (await deposit(client, external)).id);
    const second = await openSse(base, token, '/v1/events/stream?type=deposit.*', { 'last-event-id': got[1]!.id });
    written.push((await deposit(client, external)).id);
    const more = await second.waitFor(3);
    seen.push(...more.map((e) => JSON.parse(e.data).data.id));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(second.events.length, 3, 'nothing repeated');
    assert.ok(second.events.every((e) => e.event === 'deposit.credited'));
    second.close();
    assert.deepEqual(seen, written);
    // An unknown type: the stream stays open and sends nothing.
    const none = await openSse(base, token, '/v1/events/stream?type=no.such');
    await deposit(client, external);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(none.events.length, 0);
    none.close();
  });

  it(`holds at most ${streamsPerKeyMax} streams per key; the next is refused with 429 rate_limited`, async () => {
    const creds = await createKey(service, merchantId);
    const own = clientFor(service, creds);
    const token = await own.getToken();
    const base = baseUrlFor(service, 'sandbox');
    const open = [];
    for (let i = 0; i < streamsPerKeyMax; i++) open.push(await openSse(base, token, '/v1/events/stream'));
    assert.ok(open.every((s) => s.status === 200));
    const refused = await openSse(base, token, '/v1/events/stream');
    await refused.ended;
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '30');
    assert.equal(JSON.parse(refused.body).code, 'rate_limited');
    // Another key of the merchant is not counted against this one.
    const other = await keyClient(service, creds.merchantId);
    const otherStream = await openSse(base, await other.getToken(), '/v1/events/stream');
    assert.equal(otherStream.status, 200);
    otherStream.close();
    open[0]!.close();
    await open[0]!.ended;
    let again;
    for (let i = 0; i < 50; i++) {
      again = await openSse(base, token, '/v1/events/stream');
      if (again.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(again!.status, 200, 'a closed stream frees its slot');
    for (const s of [...open, again!]) s.close();
  });

  it('ends a stream whose key is disabled (or loses events:read) instead of sending it events', async () => {
    const external = await member(client);
    const base = baseUrlFor(service, 'sandbox');
    const disabled = await createKey(service, merchantId, { scopes: ['events:read'] });
    const rescoped = await createKey(service, merchantId, { scopes: ['events:read', 'merchant:read'] });
    const sse = await openSse(base, await clientFor(service, disabled).getToken(), '/v1/events/stream');
    const narrowed = await openSse(base, await clientFor(service, rescoped).getToken(), '/v1/events/stream');
    try {
      assert.equal(sse.status, 200, sse.body);
      assert.equal(narrowed.status, 200, narrowed.body);
      assert.equal(
        (await admin(service, 'PATCH', `/admin/v1/api-keys/${disabled.keyId}`, { disabled: true })).status,
        200,
      );
      assert.equal(
        (await admin(service, 'PATCH', `/admin/v1/api-keys/${rescoped.keyId}`, { scopes: ['merchant:read'] })).status,
        200,
      );
      await deposit(client, external);
      const cut = async (s: typeof sse) => {
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([
          s.ended.then(() => true),
          new Promise<false>((r) => (timer = setTimeout(r, 3_000, false))),
        ]);
        clearTimeout(timer);
        return ended;
      };
      assert.equal(await cut(sse), true, "the disabled key's stream ends");
      assert.equal(await cut(narrowed), true, 'the stream of a key without events:read ends');
      assert.deepEqual(sse.events, [], 'no event after the key was disabled');
      assert.deepEqual(narrowed.events, [], 'no event after events:read was taken away');
    } finally {
      sse.close();
      narrowed.close();
    }
  });
});

describe('concurrent writers', () => {
  it(
    'an event whose transaction commits after a later one is sent first, once; nothing passes it meanwhile',
    besideAnOpenTransaction,
    async () => {
      const external = await member(client);
      const sse = await openSse(baseUrlFor(service, 'sandbox'), await client.getToken(), '/v1/events/stream');
      // T1 writes its event (the smaller seq) and stays open; T2 writes one and commits first.
      const t1 = heldTransaction((trx) =>
        recordEvent(trx, {
          merchantId,
          environment: 'sandbox',
          type: 'deposit.credited',
          object: 'deposit',
          objectId: 'dep_held',
          externalMemberId: external,
          status: 'credited',
          statusVersion: 1,
        }),
      );
      try {
        await t1.open;
        const later = await deposit(client, external);
        await new Promise((r) => setTimeout(r, 800));
        assert.equal(
          sse.events.length,
          0,
          'the committed later event waits for the open earlier one (a reader by seq alone would pass it and ' +
            'lose the earlier one)',
        );
        t1.release();
        await t1.ended;
        const got = await sse.waitFor(2);
        assert.deepEqual(
          got.map((e) => JSON.parse(e.data).data.id),
          ['dep_held', later.id],
        );
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(sse.events.length, 2);
      } finally {
        t1.release();
        await t1.ended.catch(() => {});
        sse.close();
      }
    },
  );
});

describe('a stream opened while an old transaction holds the horizon back', () => {
  it(
    'sends what commits after it opened, never an event committed before (the horizon alone would send both)',
    besideAnOpenTransaction,
    async () => {
      const external = await member(client);
      // An unrelated transaction with an id, open across the stream's opening: the horizon stays behind it.
      const old = heldTransaction((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
      try {
        await old.open;
        const before = await deposit(client, external);
        const sse = await openSse(baseUrlFor(service, 'sandbox'), await client.getToken(), '/v1/events/stream');
        try {
          const after = await deposit(client, external);
          old.release();
          await old.ended;
          const [got] = await sse.waitFor(1);
          assert.equal(JSON.parse(got!.data).data.id, after.id, `not ${before.id}, committed before the open`);
          await new Promise((r) => setTimeout(r, 300));
          assert.deepEqual(
            sse.events.map((e) => JSON.parse(e.data).data.id),
            [after.id],
          );
        } finally {
          sse.close();
        }
      } finally {
        old.release();
        await old.ended.catch(() => {});
      }
    },
  );
});

describe('the drain', () => {
  it('ends open streams as soon as the service starts to close', async () => {
    const svc = await startTestService({ config: { workers: false } });
    const c = await keyClient(svc, await createMerchant(svc));
    const sse = await openSse(baseUrlFor(svc, 'sandbox'), await c.getToken(), '/v1/events/stream');
    assert.equal(sse.status, 200);
    const started = Date.now();
    await svc.close();
    await sse.ended;
    assert.ok(Date.now() - started < 5_000, `closed in ${Date.now() - started} ms`);
  });
});
