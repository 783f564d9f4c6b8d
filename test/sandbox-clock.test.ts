import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { createMerchant, newMerchantClient, useTestService, instantUpstreams, keyClient } from './support/service.js';
import { fundedMember } from './support/fixtures.js';
import { expectCode } from './support/expect.js';
import { payNow } from './support/emv.js';
import { advanceClock, advanceWaitMaxMs } from '../src/modules/sandbox/clock.js';
import type { IdempotencyContext } from '../src/platform/http/request-context.js';
import { withStatusReceiver } from './support/webhook-receiver.js';
import { keyedReadStats } from '../src/db/direct.js';

const seconds = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;

describe('sandbox clock', () => {
  let service: RunningService;
  // The default webhook schedule (5 s, 5 min, 30 min, ...): the clock replaces the waiting.
  useTestService({ config: instantUpstreams, merchant: false }, (s) => ({ service } = s));

  const advance = (client: MerchantWalletClient, body: unknown, idempotencyKey: string | false = randomUUID()) =>
    client.requestRaw({ method: 'POST', path: '/v1/sandbox/clock/advance', body, idempotencyKey });

  it("reads the merchant's time: real time until it is advanced", async () => {
    const { client } = await newMerchantClient(service);
    const before = Date.now();
    const { now } = await client.sandbox.clock();
    assert.match(now, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(now) - before) < 5_000, `${now} is about now`);
  });

  it("clocks read at once by several merchants' calls share a statement, each its own merchant's time", async () => {
    const ahead = await newMerchantClient(service);
    const behind = await newMerchantClient(service);
    await ahead.client.sandbox.advanceClock(86_400);
    const scope = (merchantId: string) => ({ merchantId, environment: 'sandbox' as const });
    const before = { ...keyedReadStats(service.ctx.db) };
    const [a, b, a2] = await Promise.all([
      service.ctx.clock.now(service.ctx.db, scope(ahead.merchantId)),
      service.ctx.clock.now(service.ctx.db, scope(behind.merchantId)),
      service.ctx.clock.now(service.ctx.db, scope(ahead.merchantId)),
    ]);
    const after = keyedReadStats(service.ctx.db);
    // (A background read of a clock at the same moment may add its own.)
    const [reads, statements] = [after.items - before.items, after.batches - before.batches];
    assert.ok(reads - statements >= 2, `three reads in one statement: ${reads} reads in ${statements}`);
    const day = (d: Date) => (d.getTime() - Date.now()) / 86_400_000;
    assert.ok(day(a!) > 0.99 && day(a2!) > 0.99, 'the advanced merchant is a day ahead');
    assert.ok(Math.abs(day(b!)) < 0.01, 'the other is on real time');
  });

  it('advances by whole seconds and answers the new time; the clock then reads it', async () => {
    const { client } = await newMerchantClient(service);
    const start = (await client.sandbox.clock()).now;
    const moved = await client.sandbox.advanceClock(3600);
    assert.deepEqual(Object.keys(moved), ['now']);
    const by = seconds(start, moved.now);
    assert.ok(by >= 3600 && by < 3605, `moved by ${by} s`);
    const read = (await client.sandbox.clock()).now;
    assert.ok(seconds(moved.now, read) >= 0 && seconds(moved.now, read) < 5, 'the clock keeps the advance');
    const again = await client.sandbox.advanceClock(1);
    assert.ok(seconds(read, again.now) >= 1 && seconds(read, again.now) < 5, 'advances add up');
    const year = await client.sandbox.advanceClock(31_536_000);
    assert.ok(seconds(again.now, year.now) >= 31_536_000, 'the largest advance is a year');
  });

  it(
    'refuses seconds outside 1..31,536,000, non-integers and strings: 400 invalid_request, ' + 'the clock unmoved',
    async () => {
      const { client } = await newMerchantClient(service);
      const start = (await client.sandbox.clock()).now;
      for (const body of [
        { seconds: 0 },
        { seconds: -5 },
        { seconds: 31_536_001 },
        { seconds: 1.5 },
        { seconds: '10' },
        { seconds: null },
        {},
        [],
      ]) {
        const res = await advance(client, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'invalid_request', JSON.stringify(body));
      }
      await expectCode(client.sandbox.advanceClock(0), 'invalid_request', 400);
      assert.ok(seconds(start, (await client.sandbox.clock()).now) < 5, 'no refused call moved the clock');
      assert.equal((await advance(client, { seconds: 10 }, false)).body.code, 'idempotency_key_required');
    },
  );

  it('replays an advance with the same key: the same answer, and the clock moves once', async () => {
    const { client } = await newMerchantClient(service);
    const start = (await client.sandbox.clock()).now;
    const key = randomUUID();
    const first = await advance(client, { seconds: 86_400 }, key);
    assert.equal(first.status, 200);
    const replay = await advance(client, { seconds: 86_400 }, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.deepEqual(replay.body, first.body);
    const by = seconds(start, (await client.sandbox.clock()).now);
    assert.ok(by >= 86_400 && by < 86_410, `moved once: ${by} s`);
    assert.equal((await advance(client, { seconds: 60 }, key)).body.code, 'idempotency_key_reused');
    // The SDK's own key option replays the same way.
    const sdkKey = randomUUID();
    const a = await client.sandbox.advanceClock(5, { idempotencyKey: sdkKey });
    assert.deepEqual(await client.sandbox.advanceClock(5, { idempotencyKey: sdkKey }), a);
  });

  it('answers 404 not_found on production, for reading and advancing', async () => {
    const merchantId = await createMerchant(service);
    const prod = await keyClient(service, merchantId, { environment: 'production', scopes: ['merchant:read'] });
    await expectCode(prod.sandbox.clock(), 'not_found', 404);
    await expectCode(prod.sandbox.advanceClock(60), 'not_found', 404);
    const row = await service.ctx.db
      .selectFrom('sandbox_clocks')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    assert.equal(row, undefined, 'production made no clock');
  });

  it('needs merchant:read; any key of the merchant reads the same clock', async () => {
    const merchantId = await createMerchant(service);
    const none = await keyClient(service, merchantId, { scopes: ['members:write'] });
    await expectCode(none.sandbox.clock(), 'insufficient_scope', 403);
    await expectCode(none.sandbox.advanceClock(1), 'insufficient_scope', 403);
    const reader = await keyClient(service, merchantId, { scopes: ['merchant:read'] });
    const other = await keyClient(service, merchantId);
    const moved = await reader.sandbox.advanceClock(7200);
    assert.ok(seconds(moved.now, (await other.sandbox.clock()).now) >= 0);
    assert.ok(seconds(new Date().toISOString(), (await other.sandbox.clock()).now) > 7000);
  });

  it("keeps each merchant's clock its own", async () => {
    const a = await newMerchantClient(service);
    const b = await newMerchantClient(service);
    await a.client.sandbox.advanceClock(10 * 86_400);
    const [ta, tb] = [(await a.client.sandbox.clock()).now, (await b.client.sandbox.clock()).now];
    assert.ok(seconds(tb, ta) > 10 * 86_400 - 10, 'a moved');
    assert.ok(Math.abs(Date.parse(tb) - Date.now()) < 5_000, 'b did not');
  });

  it('runs two advances of one merchant one after the other: both count, neither is lost', async () => {
    const { client } = await newMerchantClient(service);
    const start = (await client.sandbox.clock()).now;
    const [x, y] = await Promise.all([client.sandbox.advanceClock(1000), client.sandbox.advanceClock(2000)]);
    const by = seconds(start, (await client.sandbox.clock()).now);
    assert.ok(by >= 3000 && by < 3010, `moved by both: ${by} s`);
    const [early, late] = [x, y].sort((p, q) => Date.parse(p.now) - Date.parse(q.now));
    const gap = seconds(early!.now, late!.now);
    assert.ok(gap >= 1000 && gap < 2010, `the second started where the first ended: ${gap} s`);
  });

  it(
    'answers rate_limited with retry_after in the body and Retry-After when another process holds the clock ' +
      'too long; the key may be retried',
    async () => {
      const { client, merchantId } = await newMerchantClient(service);
      // Another process's advance holds the merchant's clock (its lease row), and real time runs
      // past the wait at once (each read of real time is advanceWaitMaxMs later than the one before).
      await sql`INSERT INTO sandbox_clocks (merchant_id, advance_lease_until) VALUES (${merchantId}, now() + interval
      '1 hour')
              ON CONFLICT (merchant_id) DO UPDATE SET advance_lease_until = excluded.advance_lease_until`.execute(
        service.ctx.db,
      );
      const clock = service.ctx.clock;
      const real = clock.real;
      let jumps = 0;
      clock.real = () => new Date(Date.now() + advanceWaitMaxMs * jumps++);
      const key = randomUUID();
      let res;
      try {
        res = await advance(client, { seconds: 60 }, key);
      } finally {
        clock.real = real;
      }
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.code, 'rate_limited');
      assert.equal(res.body.type, 'rate_limit_error');
      // The reference's extra fields of rate_limited: `retry_after` (seconds) and the header Retry-After.
      assert.equal(typeof res.body.retry_after, 'number', 'retry_after in the body');
      assert.equal(String(res.headers['retry-after']), String(res.body.retry_after));
      assert.equal(res.body.error?.retry_after, res.body.retry_after, 'also in the wrapped error object');
      // Not the key's result: once the clock is free, the same key runs.
      await sql`UPDATE sandbox_clocks SET advance_lease_until = NULL WHERE merchant_id = ${merchantId}`.execute(
        service.ctx.db,
      );
      const again = await advance(client, { seconds: 60 }, key);
      assert.equal(again.status, 200, JSON.stringify(again.body));
    },
  );

  it(
    'retries a failing webhook delivery when the clock passes its next attempt, in order, ' + 'without waiting',
    async () => {
      await withStatusReceiver(500, async (receiver, answerWith) => {
        const { client } = await newMerchantClient(service);
        const other = await newMerchantClient(service);
        await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['deposit.credited'] });
        await fundedMember(client, '10', 'USDT', { external: 'clock-1' });
        await service.workers.tick(); // fan-out: the record, due now
        await service.workers.jobs.drain(); // first attempt: 500
        assert.equal(receiver.received.length, 1);
        const delivery = async () => {
          for await (const d of client.webhooks.deliveries()) return d;
          throw new Error('no delivery');
        };
        const failed = await delivery();
        assert.equal(failed.status, 'failed');
        assert.equal(failed.attempts, 1);
        const wait = seconds(failed.created_at, failed.next_attempt_at);
        // 5 s after the attempt, which itself follows the record's creation by however long a loaded machine takes.
        assert.ok(wait >= 4 && wait <= 20, `the schedule's first retry is 5 s away (${wait})`);

        // Another merchant's clock does nothing to it, and neither does the queue before its time.
        await other.client.sandbox.advanceClock(3600);
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 1);

        // 5 s later the retry fails again (the next is 5 min away); both steps of one advance run in order.
        await client.sandbox.advanceClock(4);
        assert.equal(receiver.received.length, 1, 'not yet');
        await client.sandbox.advanceClock(2);
        assert.equal(receiver.received.length, 2, 'the retry ran before the advance answered');
        const second = await delivery();
        assert.equal(second.status, 'failed');
        assert.equal(second.attempts, 2);
        const gap = seconds((await client.sandbox.clock()).now, second.next_attempt_at);
        assert.ok(gap > 290 && gap <= 300, `the next is 5 min of the merchant's time away (${gap})`);

        // One advance of 40 min passes two retries (at +5 min and +35 min): both run, in order.
        await client.sandbox.advanceClock(40 * 60);
        assert.equal(receiver.received.length, 4);
        assert.equal((await delivery()).attempts, 4);

        // The receiver recovers; the next retry (2 h later) succeeds when the clock gets there.
        answerWith(200);
        await client.sandbox.advanceClock(7200);
        assert.equal(receiver.received.length, 5);
        const sent = await delivery();
        assert.equal(sent.status, 'sent');
        assert.equal(sent.attempts, 5);
        assert.equal(sent.next_attempt_at, '');
        // The queue's job for the record finds it sent: nothing more is posted.
        await service.workers.jobs.drain();
        await client.sandbox.advanceClock(86_400);
        await service.workers.jobs.drain();
        assert.equal(receiver.received.length, 5);
        assert.equal(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same event each time');
      });
    },
  );

  it("lets the queue pick a sandbox delivery when the merchant's time reaches it", async () => {
    await withStatusReceiver(500, async (receiver, answerWith) => {
      const { client, merchantId } = await newMerchantClient(service);
      await client.webhooks.createEndpoint({ url: receiver.url(), event_types: ['deposit.credited'] });
      await fundedMember(client, '10', 'USDT', { external: 'clock-2' });
      await service.workers.tick();
      await service.workers.jobs.drain();
      assert.equal(receiver.received.length, 1);
      answerWith(200);
      // Moved underneath the processes (as another process's advance would): the job's time is the merchant's.
      await service.ctx.db
        .insertInto('sandbox_clocks')
        .values({ merchant_id: merchantId, offset_ms: '6000' })
        .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ offset_ms: '6000' }))
        .execute();
      await service.workers.jobs.drain();
      assert.equal(receiver.received.length, 2, "the job ran on the merchant's time");
    });
  });

  it('dates what a merchant sees on its own clock: members, deposits, withdrawals, QR orders', async () => {
    const ahead = await newMerchantClient(service);
    const plain = await newMerchantClient(service);
    await ahead.client.sandbox.advanceClock(2 * 86_400);
    const dates = async (client: MerchantWalletClient) => {
      const external = `dt-${randomUUID().slice(0, 8)}`;
      const member = await client.members.create({ external_member_id: external });
      const deposit = await client.deposits.create({
        member_id: external,
        asset: 'SGD',
        amount: '50.00',
        tx_hash: `bank-${randomUUID()}`,
      });
      await client.deposits.create({ member_id: external, asset: 'USDT', amount: '50', tx_hash: `0x${randomUUID()}` });
      const withdrawal = await client.withdrawals.create(
        { asset: 'USDT', network: 'TRON', address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW', amount: '10' },
        { onBehalfOf: external },
      );
      await client.withdrawals.confirm(withdrawal.id);
      const settled = await client.withdrawals.get(withdrawal.id);
      const order = await client.request<any>({
        method: 'POST',
        path: '/v1/qrpay/payments',
        body: { qr_code: payNow({ amount: '1' }), asset: 'SGD' },
        onBehalfOf: external,
      });
      assert.equal(order.status, 'completed');
      return [
        member.created_at,
        deposit.created_at,
        withdrawal.created_at,
        settled.updated_at,
        order.created_at,
        order.updated_at,
      ].map(String);
    };
    const now = (client: MerchantWalletClient) => client.sandbox.clock().then((c) => c.now);
    for (const at of await dates(ahead.client))
      assert.ok(Math.abs(seconds(at, await now(ahead.client))) < 30, `${at} is the advanced merchant's time`);
    for (const at of await dates(plain.client))
      assert.ok(Math.abs(Date.parse(at) - Date.now()) < 30_000, `${at} is real time for a merchant never advanced`);
  });

  it("ends an upstream preset after 3600 s of the merchant's clock", async () => {
    const { client } = await newMerchantClient(service);
    const external = `clk-${randomUUID().slice(0, 8)}`;
    await fundedMember(client, '100.00', 'SGD', { external, txHashPrefix: 'bank-' });
    const pay = async () =>
      (
        await client.request<any>({
          method: 'POST',
          path: '/v1/qrpay/payments',
          body: { qr_code: payNow({ amount: '1' }), asset: 'SGD' },
          onBehalfOf: external,
        })
      ).status as string;
    const preset = await client.sandbox.presetUpstreamBehavior({ upstream: 'qrpay', behavior: 'reject' });
    assert.equal(preset.expires_in, 3600);
    assert.equal(await pay(), 'failed');
    await client.sandbox.advanceClock(3590);
    assert.equal(await pay(), 'failed', 'still in force before the hour is over');
    await client.sandbox.advanceClock(11);
    assert.equal(await pay(), 'completed', 'back to success after 3601 s');
  });
  it('an advance that outlived its lease never frees the lease another advance took meanwhile', async () => {
    const merchantId = await createMerchant(service);
    const leaseOf = async () =>
      (
        await sql<{
          held: boolean;
        }>`SELECT advance_lease_until IS NOT NULL AS held FROM sandbox_clocks
          WHERE merchant_id = ${merchantId}`.execute(service.ctx.db)
      ).rows[0]?.held;
    let ran = false;
    // One step of the advance runs past its lease: the lease lapses and another advance takes the clock.
    const longStep = {
      name: 'test.long_step',
      nextDue: async () => (ran ? null : new Date(Date.now() + 1_000)),
      runDue: async () => {
        ran = true;
        await sql`UPDATE sandbox_clocks SET advance_lease_until = now() - interval '1 second' WHERE merchant_id =
          ${merchantId}`.execute(service.ctx.db);
        // Its lease ends a second after this advance's renewed one would: the embedded database's
        // clock can read the same instant for both, which would make them the same lease.
        await sql`UPDATE sandbox_clocks SET advance_lease_until = now() + interval '10 minutes 1 second' WHERE
          merchant_id = ${merchantId} AND advance_lease_until < now()`.execute(service.ctx.db);
      },
    };
    await advanceClock(service.ctx, [longStep], merchantId, 60, { noStore: false } as IdempotencyContext);
    assert.ok(ran);
    assert.equal(await leaseOf(), true, 'the other advance still holds the clock');
    await sql`UPDATE sandbox_clocks SET advance_lease_until = NULL WHERE merchant_id = ${merchantId}`.execute(
      service.ctx.db,
    );
    await advanceClock(service.ctx, [], merchantId, 1, { noStore: false } as IdempotencyContext);
    assert.equal(await leaseOf(), false, 'an advance that kept its lease frees it');
  });
});
