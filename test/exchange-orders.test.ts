/**
 * Exchange through HTTP via the SDK: quotes exactly as the reference (scale, upper-casing, `lock`,
 * `quote_id` absent without a lock, `quote_ttl_sec`, idempotent locks), every gate with its 4xx,
 * locked and market execution, parallel executions of one quote, expiry by the sandbox clock,
 * daily limits across the clock's midnight, step-up, merchant conversions; the ledger verified
 * after each.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { MerchantWalletError, StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import { exchangeTickers } from '../src/modules/exchange/workers.js';
import { kycMember } from './support/fixtures.js';

describe('exchange', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({}, (s) => ({ service, client, merchantId } = s));
  // Every test ends on a ledger that verifies.
  afterEach(() => expectLedgerClean(service));

  const balance = async (m: string, asset: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === asset)?.available ?? '0';
  const direction = async (id: string, patch: Record<string, unknown>) => {
    const res = await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, patch);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const raw = (m: string, body: unknown, key?: string) =>
    client.request<any>({
      method: 'POST',
      path: '/v1/exchange/quotes',
      body,
      onBehalfOf: m,
      idempotencyKey: key ?? false,
    });

  /** Member `m`'s locked quote (through client `c`, the suite's unless named). */
  const lockedQuote = (m: string, from_asset: string, to_asset: string, from_amount: string, c = client) =>
    c.exchange.quote({ from_asset, to_asset, from_amount, lock: true }, { onBehalfOf: m });
  /** How many journal entries an order (`referenceId`) has posted. */
  const entryCount = async (referenceId: string) =>
    (await service.ctx.db.selectFrom('journal_entries').select('id').where('reference_id', '=', referenceId).execute())
      .length;
  /** A member at KYC level 1 (unless told) holding 1000 USDT. */
  async function member(options: { kyc?: number; usdt?: string; c?: MerchantWalletClient } = {}) {
    const deposits = { USDT: options.usdt ?? '1000' };
    return (await kycMember(service, options.c ?? client, { prefix: 'x', level: options.kyc, deposits })).external;
  }

  it(
    'a read-only quote: upper-cased, exact numbers, quote_ttl_sec always, ' + 'the key quote_id absent (not null)',
    async () => {
      const m = await member();
      const q = await raw(m, { from_asset: 'usdt', to_asset: 'eur', from_amount: '100.000000' });
      assert.equal(q.from_asset, 'USDT');
      assert.equal(q.to_asset, 'EUR');
      assert.equal(q.from_amount, '100.000000');
      assert.equal(q.rate, '0.9231481481', 'mid 0.925925925925 less 30 bps, rounded down');
      assert.equal(q.fee_asset, 'USDT');
      assert.equal(q.fee_amount, '0.100000');
      assert.equal(q.to_amount, '92.22');
      assert.equal(q.quote_ttl_sec, 60);
      assert.equal(q.ledger_scale_from, 6);
      assert.equal(q.ledger_scale_to, 2);
      assert.equal('quote_id' in q, false);
      assert.equal('quote_expires_at' in q, false);
      assert.equal((await client.exchange.list({ onBehalfOf: m })).length, 0, 'nothing stored');
      const btc = await client.exchange.quote(
        { from_asset: 'USDT', to_asset: 'BTC', from_amount: '1000' },
        { onBehalfOf: m },
      );
      assert.equal(btc.fee_asset, 'BTC', 'buying BTC pays the fee in BTC (per direction)');
      assert.equal(btc.ledger_scale_to, 8);
    },
  );

  it(
    'refuses malformed input: lock not a JSON boolean (invalid_fields with fields), a non-zero tail beyond the ' +
      'scale, same asset, unknown asset',
    async () => {
      const m = await member();
      for (const lock of ['true', 1, null, {}]) {
        await assert.rejects(raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10', lock }), (err: any) => {
          assert.equal(err.code, 'invalid_fields');
          assert.equal(err.status, 400);
          assert.deepEqual(err.body.fields, [{ key: 'lock', reason: 'not_boolean' }]);
          return true;
        });
      }
      await expectCode(
        raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10.0000001' }),
        'invalid_request',
        400,
      );
      assert.equal(
        (await raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10.0000000' })).from_amount,
        '10.000000',
        'a zero tail is accepted',
      );
      await expectCode(raw(m, { from_asset: 'EUR', to_asset: 'USDT', from_amount: '10.001' }), 'invalid_request', 400);
      await expectCode(raw(m, { from_asset: 'usdt', to_asset: 'USDT', from_amount: '10' }), 'invalid_request', 400);
      await expectCode(raw(m, { from_asset: 'DOGE', to_asset: 'USDT', from_amount: '10' }), 'invalid_request', 400);
      await expectCode(raw(m, { from_asset: 'USDT', to_asset: 'EUR', amount: '10' }), 'invalid_request', 400);
      await expectCode(raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '0' }), 'invalid_request', 400);
    },
  );

  it(
    'business refusals are 4xx: kyc_required, amount_out_of_range, service_unavailable (direction off, no ' +
      'direction, stale rate)',
    async () => {
      const low = await member({ kyc: 0 });
      await expectCode(raw(low, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' }), 'kyc_required', 400);
      const m = await member();
      await expectCode(raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '0.5' }), 'amount_out_of_range', 400);
      await expectCode(
        raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100001' }),
        'amount_out_of_range',
        400,
      );
      await expectCode(raw(m, { from_asset: 'USDT', to_asset: 'GBP', from_amount: '10' }), 'service_unavailable', 400);
      await direction('exd_s_usdt_eur', { enabled: false });
      try {
        await expectCode(
          raw(m, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' }),
          'service_unavailable',
          400,
        );
      } finally {
        await direction('exd_s_usdt_eur', { enabled: true });
      }
      // A halted feed is fresh for 60 seconds of the merchant's clock, then `rate unavailable`.
      const { client: other } = await newMerchantClient(service);
      const m2 = await member({ c: other });
      const quoteBtc = () =>
        other.exchange.quote({ from_asset: 'USDT', to_asset: 'BTC', from_amount: '10' }, { onBehalfOf: m2 });
      const freshThenStale = async () => {
        assert.equal((await admin(service, 'PUT', '/admin/v1/exchange/rate-feeds/BTC', { halted: true })).status, 200);
        try {
          await quoteBtc();
          await other.sandbox.advanceClock(120);
          await expectCode(quoteBtc(), 'service_unavailable', 400);
        } finally {
          await admin(service, 'PUT', '/admin/v1/exchange/rate-feeds/BTC', { halted: false });
        }
        await quoteBtc();
      };
      await freshThenStale();
      // The same on a sandbox clock already a day ahead when the feed is halted (it was stale at once).
      await other.sandbox.advanceClock(86_400);
      await freshThenStale();
    },
  );

  it(
    'a locked quote is an order in state quoted; the same key and body give the same lock; ' + 'no money moves',
    async () => {
      const m = await member();
      const key = randomUUID();
      /** A locked quote under the test's key. */
      const lockUnderKey = (from_asset: string, to_asset: string, from_amount: string) =>
        client.exchange.quote(
          { from_asset, to_asset, from_amount, lock: true },
          { onBehalfOf: m, idempotencyKey: key },
        );
      const q = await lockUnderKey('USDT', 'USDC', '250');
      assert.match(q.quote_id!, /^exc_[0-9a-f-]{36}$/);
      assert.ok(Date.parse(q.quote_expires_at!) > Date.now());
      assert.equal(q.quote_ttl_sec, 60);
      const again = await lockUnderKey('USDT', 'USDC', '250');
      assert.deepEqual(again, q);
      await expectCode(lockUnderKey('USDT', 'USDC', '251'), 'idempotency_key_reused', 409);
      // "The same key, direction and amount": asset codes in any case, the amount with a zero tail.
      const respelled = await lockUnderKey('usdt', 'Usdc', '250.000000');
      assert.deepEqual(respelled, q);
      await expectCode(lockUnderKey('USDC', 'USDT', '250'), 'idempotency_key_reused', 409);
      await expectCode(lockUnderKey('USDT', 'USDC', '0250'), 'idempotency_key_reused', 409);
      const order = await client.exchange.get(q.quote_id!, { onBehalfOf: m });
      assert.equal(order.status, 'quoted');
      assert.equal(order.type, 'locked');
      assert.equal(order.to_amount, q.to_amount);
      assert.deepEqual(
        (await client.exchange.list({ onBehalfOf: m })).map((o) => o.id),
        [q.quote_id],
      );
      assert.equal(await balance(m, 'USDT'), '1000.000000');
    },
  );

  it(
    'the key means something only with lock: true: a read-only quote with a key is priced anew each time, ' +
      'never replayed, and leaves the key free for a lock',
    async () => {
      const m = await member({ kyc: 0 });
      const key = randomUUID();
      const body = { from_asset: 'USDT', to_asset: 'USDC', from_amount: '10' };
      const quote = () =>
        client.requestRaw({ method: 'POST', path: '/v1/exchange/quotes', body, onBehalfOf: m, idempotencyKey: key });
      const refused = await quote();
      assert.equal(refused.body.code, 'kyc_required');
      await admin(service, 'POST', `/admin/v1/members/${(await client.members.get(m)).id}/kyc-review`, {
        decision: 'approved',
        level: 1,
      });
      const first = await quote();
      assert.equal(first.status, 200, 'priced now, not the first refusal replayed');
      assert.equal(first.headers['x-idempotent-replay'], undefined);
      const { spread_bps: spread } = await service.ctx.db
        .selectFrom('exchange_directions')
        .select('spread_bps')
        .where('id', '=', 'exd_s_usdt_usdc')
        .executeTakeFirstOrThrow();
      await direction('exd_s_usdt_usdc', { spread_bps: spread + 40 });
      try {
        const second = await quote();
        assert.equal(second.headers['x-idempotent-replay'], undefined);
        assert.notEqual(second.body.rate, first.body.rate, 'a read-only quote is never a stale replay');
      } finally {
        await direction('exd_s_usdt_usdc', { spread_bps: spread });
      }
      const lock = { ...body, lock: true };
      const locked = await client.requestRaw({
        method: 'POST',
        path: '/v1/exchange/quotes',
        body: lock,
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(locked.status, 200, JSON.stringify(locked.body));
      assert.match(locked.body.quote_id, /^exc_/);
      const replayed = await client.requestRaw({
        method: 'POST',
        path: '/v1/exchange/quotes',
        body: lock,
        onBehalfOf: m,
        idempotencyKey: key,
      });
      assert.equal(replayed.headers['x-idempotent-replay'], 'true');
      assert.equal(
        replayed.body.quote_id,
        locked.body.quote_id,
        'with lock: true the same key and body return the same locked quote',
      );
      assert.equal((await client.exchange.list({ onBehalfOf: m })).length, 1);
    },
  );

  it('executes a lock at its numbers; one balanced pair of entries; a second execution is state_invalid', async () => {
    const m = await member();
    const q = await lockedQuote(m, 'USDT', 'EUR', '100');
    const done = await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m });
    assert.equal(done.id, q.quote_id);
    assert.equal(done.status, 'completed');
    assert.equal(done.status_version, 2);
    assert.equal(done.to_amount, q.to_amount);
    assert.equal(done.rate, q.rate);
    assert.equal(await balance(m, 'USDT'), '900.000000');
    assert.equal(await balance(m, 'EUR'), q.to_amount);
    const entries = await service.ctx.db
      .selectFrom('journal_entries')
      .select(['kind', 'asset'])
      .where('reference_id', '=', done.id)
      .orderBy('kind')
      .execute();
    assert.deepEqual(entries, [
      { kind: 'exchange.buy', asset: 'EUR' },
      { kind: 'exchange.sell', asset: 'USDT' },
    ]);
    await expectCode(client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }), 'state_invalid', 400);
    await expectCode(
      client.exchange.execute({ quote_id: `exc_${randomUUID()}` }, { onBehalfOf: m }),
      'resource_not_found',
      404,
    );
    const other = await member();
    await expectCode(
      client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: other }),
      'resource_not_found',
      404,
    );
    // After a timeout the order is looked up by its id (the quote id).
    assert.equal((await client.exchange.get(done.id.replace(/^exc_/, ''), { onBehalfOf: m })).status, 'completed');
  });

  it('parallel executions of one locked quote execute it once', async () => {
    const m = await member();
    const q = await lockedQuote(m, 'USDT', 'BTC', '300');
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    assert.equal(ok.length, 1);
    for (const r of results)
      if (r.status === 'rejected') assert.equal((r.reason as MerchantWalletError).code, 'state_invalid');
    assert.equal(await balance(m, 'USDT'), '700.000000');
    assert.equal(await balance(m, 'BTC'), q.to_amount);
    assert.equal(await entryCount(q.quote_id!), 2);
  });

  it('an unused lock expires by the sandbox clock (state expired, no money moved) and is never re-priced', async () => {
    const { client: c } = await newMerchantClient(service);
    const m = await member({ c });
    const q = await lockedQuote(m, 'USDT', 'ETH', '50', c);
    await c.sandbox.advanceClock(61);
    const expired = await c.exchange.get(q.quote_id!, { onBehalfOf: m });
    assert.equal(expired.status, 'expired');
    assert.equal(expired.status_version, 2);
    assert.equal(expired.expired_at, q.quote_expires_at);
    await expectCode(c.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }), 'state_invalid', 400);
    assert.equal((await c.balances.list({ onBehalfOf: m })).find((b) => b.asset === 'USDT')?.available, '1000.000000');
    const events = await service.ctx.db
      .selectFrom('events')
      .select(['type', 'status_version'])
      .where('object_id', '=', q.quote_id!)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      events.map((e) => `${e.type}@${e.status_version}`),
      ['exchange.order.quoted@1', 'exchange.order.expired@2'],
    );
    assert.equal(await entryCount(q.quote_id!), 0);
  });

  it("the background ticker voids locks past their end on each merchant's own clock", async () => {
    const m = await member();
    const q = await lockedQuote(m, 'USDT', 'EUR', '20');
    await exchangeTickers[0]!.run(service.ctx);
    assert.equal((await client.exchange.get(q.quote_id!, { onBehalfOf: m })).status, 'quoted');
    await service.ctx.db
      .updateTable('exchange_orders')
      .set({ quote_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', q.quote_id!)
      .execute();
    await exchangeTickers[0]!.run(service.ctx);
    assert.equal((await client.exchange.get(q.quote_id!, { onBehalfOf: m })).status, 'expired');
  });

  it(
    'a read never shows a lock past its end as quoted: get and list void it first (once, with its event), ' +
      'before the ticker runs',
    async () => {
      const { client: c, merchantId: mid } = await newMerchantClient(service);
      const m = await member({ c });
      const q = await lockedQuote(m, 'USDT', 'ETH', '50', c);
      const other = await lockedQuote(m, 'USDT', 'ETH', '40', c);
      assert.equal(
        (await c.exchange.get(q.quote_id!, { onBehalfOf: m })).status,
        'quoted',
        'within the window a read changes nothing',
      );
      // Time passes with no ticker (the test service runs no workers): the merchant's clock moves
      // without `advance`, which would run the timed processes itself.
      await service.ctx.db
        .insertInto('sandbox_clocks')
        .values({ merchant_id: mid, offset_ms: '61000' })
        .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ offset_ms: sql`sandbox_clocks.offset_ms + 61000` }))
        .execute();
      const read = await c.exchange.get(q.quote_id!, { onBehalfOf: m });
      assert.equal(read.status, 'expired');
      assert.equal(read.status_version, 2);
      assert.equal(read.expired_at, q.quote_expires_at);
      const listed = await c.exchange.list({ onBehalfOf: m, status: 'quoted' });
      assert.deepEqual(
        listed.map((o) => o.id),
        [],
        'the other due lock is voided by the list before it answers',
      );
      assert.equal((await c.exchange.get(other.quote_id!, { onBehalfOf: m })).status, 'expired');
      await c.exchange.get(q.quote_id!, { onBehalfOf: m });
      const events = await service.ctx.db
        .selectFrom('events')
        .select(['type', 'status_version'])
        .where('object_id', '=', q.quote_id!)
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        events.map((e) => `${e.type}@${e.status_version}`),
        ['exchange.order.quoted@1', 'exchange.order.expired@2'],
      );
      await expectCode(c.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }), 'state_invalid', 400);
    },
  );

  it('market orders are priced at execution, in both directions; balance is a gate', async () => {
    const m = await member();
    const buy = await client.exchange.execute(
      { from_asset: 'usdt', to_asset: 'btc', from_amount: '650' },
      { onBehalfOf: m },
    );
    assert.equal(buy.type, 'market');
    assert.equal(buy.status, 'completed');
    assert.equal(buy.status_version, 1);
    assert.equal(buy.fee_asset, 'BTC');
    assert.equal(await balance(m, 'BTC'), buy.to_amount);
    const sell = await client.exchange.execute(
      { from_asset: 'BTC', to_asset: 'USDT', from_amount: buy.to_amount },
      { onBehalfOf: m },
    );
    assert.equal(sell.fee_asset, 'BTC');
    assert.equal(await balance(m, 'BTC'), '0.00000000');
    assert.ok(Number(await balance(m, 'USDT')) < 1000, 'a round trip never creates money');
    await expectCode(
      client.exchange.execute({ from_asset: 'USDT', to_asset: 'EUR', from_amount: '5000' }, { onBehalfOf: m }),
      'insufficient_balance',
      400,
    );
    // A lock sent with numbers (the reference names the call as taking quote_id and from_amount): they must be the
    // quote's.
    const restated = await lockedQuote(m, 'USDT', 'EUR', '10');
    for (const wrong of [
      { from_amount: '10.000001' },
      { from_amount: '11' },
      { from_asset: 'USDC' },
      { to_asset: 'USD' },
      { from_amount: '10.0000001' },
    ]) {
      await expectCode(
        client.exchange.execute({ quote_id: restated.quote_id!, ...wrong }, { onBehalfOf: m }),
        'invalid_request',
        400,
      );
    }
    assert.equal(
      (await client.exchange.get(restated.quote_id!, { onBehalfOf: m })).status,
      'quoted',
      'a refused restatement executes nothing',
    );
    const executed = await client.exchange.execute(
      { quote_id: restated.quote_id!, from_amount: '10.00', from_asset: 'usdt', to_asset: 'EUR' },
      { onBehalfOf: m },
    );
    assert.equal(executed.id, restated.quote_id);
    assert.equal(executed.to_amount, restated.to_amount);
    // A lock fixes the price only: balance is checked at execution.
    const lock = await lockedQuote(m, 'USDT', 'USD', '300');
    await client.exchange.execute(
      { from_asset: 'USDT', to_asset: 'USD', from_amount: await balance(m, 'USDT') },
      { onBehalfOf: m },
    );
    await expectCode(
      client.exchange.execute({ quote_id: lock.quote_id! }, { onBehalfOf: m }),
      'insufficient_balance',
      400,
    );
    assert.equal(
      (await client.exchange.get(lock.quote_id!, { onBehalfOf: m })).status,
      'quoted',
      'a refused execution leaves the lock',
    );
  });

  it('executes orders sent at once, of several members, each as if alone (batches of executions)', async () => {
    const [m1, m2, m3] = [await member(), await member(), await member()];
    await direction('exd_s_usdt_eur', { step_up_threshold: '500' });
    try {
      const lock = await lockedQuote(m3, 'USDT', 'USD', '100');
      const execute = (m: string, body: Parameters<MerchantWalletClient['exchange']['execute']>[0]) =>
        client.exchange.execute(body, { onBehalfOf: m }).then(
          (order) => ({ order, code: undefined as string | undefined }),
          (err) => ({ order: undefined, code: (err as MerchantWalletError).code }),
        );
      // m1's two orders cannot both be paid: whichever is written first is, as if they came one by one.
      const [a, b, c, d, e, f] = await Promise.all([
        execute(m1, { from_asset: 'USDT', to_asset: 'BTC', from_amount: '300' }),
        execute(m1, { from_asset: 'USDT', to_asset: 'USD', from_amount: '800' }),
        execute(m2, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '600' }),
        execute(m2, { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100' }),
        execute(m3, { quote_id: lock.quote_id! }),
        execute(m3, { from_asset: 'USDT', to_asset: 'USD', from_amount: '50' }),
      ]);
      const m1Paid = [a, b].filter((x) => x.order?.status === 'completed');
      assert.equal(m1Paid.length, 1, JSON.stringify([a, b]));
      assert.equal([a, b].find((x) => !x.order)?.code, 'insufficient_balance');
      assert.equal(await balance(m1, 'USDT'), a.order ? '700.000000' : '200.000000');
      assert.equal(c.code, 'step_up_required', 'at the threshold: asked');
      assert.equal(d.order?.status, 'completed');
      assert.equal(await balance(m2, 'USDT'), '900.000000');
      assert.equal(e.order?.id, lock.quote_id, 'the lock executed at its numbers');
      assert.equal(e.order?.to_amount, lock.to_amount);
      assert.equal(f.order?.status, 'completed');
      assert.equal(await balance(m3, 'USDT'), '850.000000');
      for (const order of [...m1Paid, d, e, f]) assert.equal(await entryCount(order.order!.id), 2, 'a sell and a buy');
    } finally {
      await direction('exd_s_usdt_eur', { step_up_threshold: '10000' });
    }
  });

  it('gates again at execution: direction switched off, KYC lowered', async () => {
    const m = await member();
    const q = await lockedQuote(m, 'USDT', 'USDC', '10');
    await direction('exd_s_usdt_usdc', { enabled: false });
    try {
      await expectCode(
        client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }),
        'service_unavailable',
        400,
      );
    } finally {
      await direction('exd_s_usdt_usdc', { enabled: true });
    }
    await direction('exd_s_usdt_usdc', { min_kyc_level: 2 });
    try {
      await expectCode(client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }), 'kyc_required', 400);
    } finally {
      await direction('exd_s_usdt_usdc', { min_kyc_level: 1 });
    }
    assert.equal((await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m })).status, 'completed');
  });

  it("daily limits count the member's day on the merchant's clock, and reset at its midnight", async () => {
    const { client: c } = await newMerchantClient(service);
    const m = await member({ c });
    await direction('exd_s_usdt_usd', { member_daily_count: 2, member_daily_amount: '300' });
    try {
      const now = new Date((await c.sandbox.clock()).now);
      const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
      await c.sandbox.advanceClock(Math.floor((midnight - now.getTime()) / 1000) - 120);
      await c.exchange.execute({ from_asset: 'USDT', to_asset: 'USD', from_amount: '100' }, { onBehalfOf: m });
      await assert.rejects(
        c.exchange.execute({ from_asset: 'USDT', to_asset: 'USD', from_amount: '250' }, { onBehalfOf: m }),
        (err: any) => {
          assert.equal(err.code, 'limit_exceeded');
          assert.equal(err.body.limit_type, 'daily');
          assert.equal(err.body.limit_scope, 'member');
          return true;
        },
      );
      await c.exchange.execute({ from_asset: 'USDT', to_asset: 'USD', from_amount: '50' }, { onBehalfOf: m });
      await expectCode(
        c.exchange.execute({ from_asset: 'USDT', to_asset: 'USD', from_amount: '10' }, { onBehalfOf: m }),
        'limit_exceeded',
        400,
      );
      await expectCode(
        c.exchange.quote({ from_asset: 'USDT', to_asset: 'USD', from_amount: '10' }, { onBehalfOf: m }),
        'limit_exceeded',
        400,
      );
      await c.sandbox.advanceClock(180);
      const next = await c.exchange.execute(
        { from_asset: 'USDT', to_asset: 'USD', from_amount: '250' },
        { onBehalfOf: m },
      );
      assert.equal(next.status, 'completed', "a new day on the merchant's clock");
    } finally {
      await direction('exd_s_usdt_usd', { member_daily_count: 50, member_daily_amount: '250000' });
    }
  });

  it("asks for step-up at or above the direction's threshold; the repeat with x-step-up executes", async () => {
    const m = await member();
    await direction('exd_s_usdt_eur', { step_up_threshold: '200' });
    try {
      await client.exchange.execute({ from_asset: 'USDT', to_asset: 'EUR', from_amount: '199' }, { onBehalfOf: m });
      const q = await lockedQuote(m, 'USDT', 'EUR', '200');
      let err: StepUpRequiredError | undefined;
      try {
        await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m });
      } catch (e) {
        err = e as StepUpRequiredError;
      }
      assert.ok(err instanceof StepUpRequiredError, String(err));
      assert.equal((await client.exchange.get(q.quote_id!, { onBehalfOf: m })).status, 'quoted');
      await client.hostedScreens.sandboxComplete(err.challengeId, 'approved');
      const done = (await err.repeat()) as any;
      assert.equal(done.status, 'completed');
    } finally {
      await direction('exd_s_usdt_eur', { step_up_threshold: '10000' });
    }
  });

  it(
    'merchant conversions: priced at execution from prepaid; quote_id is quote_lock_unsupported; pairs from ' +
      'the catalogue',
    async () => {
      const pairs = await client.exchange.conversionPairs();
      assert.deepEqual(pairs.map((p) => `${p.from_asset}>${p.to_asset}`).sort(), [
        'BTC>USDT',
        'EUR>USDT',
        'USDC>USDT',
        'USDT>BTC',
        'USDT>EUR',
        'USDT>USDC',
      ]);
      await expectCode(
        client.exchange.convert({ from_asset: 'USDT', to_asset: 'EUR', from_amount: '10', quote_id: 'exc_1' }),
        'quote_lock_unsupported',
        400,
      );
      await expectCode(client.exchange.convert({ quote_id: 'exc_1' } as never), 'quote_lock_unsupported', 400);
      await expectCode(
        client.exchange.convert({ from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' }),
        'merchant_insufficient_funds',
        400,
      );
      const credit = await admin(service, 'POST', `/admin/v1/merchants/${merchantId}/prepaid-credits`, {
        environment: 'sandbox',
        asset: 'USDT',
        amount: '500',
      });
      assert.equal(credit.status, 201, JSON.stringify(credit.body));
      const cnv = await client.exchange.convert({ from_asset: 'usdt', to_asset: 'eur', from_amount: '100' });
      assert.match(cnv.id, /^cnv_/);
      assert.equal(cnv.status, 'completed');
      assert.equal(cnv.to_amount, '92.22');
      const balances = await client.merchant.balances();
      assert.equal(balances.find((b) => b.asset === 'USDT')?.prepaid_available, '400.000000');
      assert.equal(balances.find((b) => b.asset === 'EUR')?.prepaid_available, '92.22');
      await expectCode(
        client.exchange.convert({ from_asset: 'USDT', to_asset: 'ETH', from_amount: '10' }),
        'service_unavailable',
        400,
      );
      // A disabled asset's pairs leave the list (a conversion would only answer asset_not_allowed).
      assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: false })).status, 200);
      try {
        assert.deepEqual((await client.exchange.conversionPairs()).map((p) => `${p.from_asset}>${p.to_asset}`).sort(), [
          'BTC>USDT',
          'EUR>USDT',
          'USDT>BTC',
          'USDT>EUR',
        ]);
      } finally {
        assert.equal((await admin(service, 'PATCH', '/admin/v1/assets/USDC', { enabled: true })).status, 200);
      }
      assert.equal((await client.exchange.conversionPairs()).length, 6);
    },
  );

  it('the operator manages directions', async () => {
    const list = await admin(service, 'GET', '/admin/v1/exchange/directions?environment=production&limit=100');
    assert.equal(list.body.data.length, 10);
    const d = await admin(service, 'GET', '/admin/v1/exchange/directions/exd_p_usdt_btc');
    assert.equal(d.body.fee_side, 'to');
    assert.equal(d.body.min_kyc_level, 1);
    assert.equal(d.body.min_amount, '1.000000');
    const created = await admin(service, 'POST', '/admin/v1/exchange/directions', {
      environment: 'sandbox',
      from_asset: 'eur',
      to_asset: 'usd',
      fee_side: 'from',
      min_amount: '1',
      fee_bps: 5,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.from_asset, 'EUR');
    assert.equal(
      (
        await admin(service, 'POST', '/admin/v1/exchange/directions', {
          environment: 'sandbox',
          from_asset: 'EUR',
          to_asset: 'USD',
          fee_side: 'from',
          min_amount: '1',
        })
      ).body.code,
      'duplicate_resource',
    );
    const m = await member();
    await client.deposits.create({ member_id: m, asset: 'EUR', amount: '10', tx_hash: `t-${randomUUID()}` });
    const q = await client.exchange.quote({ from_asset: 'EUR', to_asset: 'USD', from_amount: '10' }, { onBehalfOf: m });
    assert.equal(q.fee_amount, '0.01');
  });

  it("the operator's member_daily_count past the column's range is a 400, not a 500, and changes nothing", async () => {
    const before = await admin(service, 'GET', '/admin/v1/exchange/directions/exd_s_usdt_usdc');
    for (const count of [2_147_483_648, 99_999_999_999]) {
      const patched = await admin(service, 'PATCH', '/admin/v1/exchange/directions/exd_s_usdt_usdc', {
        member_daily_count: count,
      });
      assert.deepEqual(
        [patched.status, patched.body.code],
        [400, 'invalid_request'],
        `PATCH member_daily_count ${count}`,
      );
      const created = await admin(service, 'POST', '/admin/v1/exchange/directions', {
        environment: 'production',
        from_asset: 'EUR',
        to_asset: 'USD',
        fee_side: 'from',
        min_amount: '1',
        member_daily_count: count,
      });
      assert.deepEqual(
        [created.status, created.body.code],
        [400, 'invalid_request'],
        `POST member_daily_count ${count}`,
      );
    }
    assert.deepEqual((await admin(service, 'GET', '/admin/v1/exchange/directions/exd_s_usdt_usdc')).body, before.body);
    const largest = await admin(service, 'PATCH', '/admin/v1/exchange/directions/exd_s_usdt_usdc', {
      member_daily_count: 2_147_483_647,
    });
    assert.equal(largest.status, 200, JSON.stringify(largest.body));
    assert.equal(
      (
        await admin(service, 'PATCH', '/admin/v1/exchange/directions/exd_s_usdt_usdc', {
          member_daily_count: before.body.member_daily_count,
        })
      ).status,
      200,
    );
  });

  it(
    'an operator range no amount fits (max_amount below min_amount, either changed alone) is refused and ' +
      'changes nothing',
    async () => {
      const id = 'exd_s_usdt_usdc';
      const before = await admin(service, 'GET', `/admin/v1/exchange/directions/${id}`);
      const tooLow = await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, { max_amount: '0.5' });
      assert.deepEqual(
        [tooLow.status, tooLow.body.code, tooLow.body.fields],
        [400, 'invalid_fields', [{ key: 'max_amount', reason: 'below_min_amount' }]],
      );
      assert.equal(
        (await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, { max_amount: '100' })).status,
        200,
      );
      const minAbove = await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, { min_amount: '101' });
      assert.deepEqual([minAbove.status, minAbove.body.code], [400, 'invalid_fields']);
      const created = await admin(service, 'POST', '/admin/v1/exchange/directions', {
        environment: 'production',
        from_asset: 'EUR',
        to_asset: 'USD',
        fee_side: 'from',
        min_amount: '10',
        max_amount: '5',
      });
      assert.deepEqual([created.status, created.body.code], [400, 'invalid_fields']);
      assert.equal(
        (await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, { max_amount: before.body.max_amount }))
          .status,
        200,
      );
      assert.deepEqual(
        (await admin(service, 'GET', `/admin/v1/exchange/directions/${id}`)).body.min_amount,
        before.body.min_amount,
      );
    },
  );

  it(
    'the fixed fee is stated in the fee asset: moving the fee to the other side must restate it (never reread ' +
      "at the other asset's scale)",
    async () => {
      const id = 'exd_s_usdt_eur';
      await direction(id, { fee_fixed: '0.500000' });
      try {
        // 0.5 USDT (500000 minor units at scale 6) would become 5000.00 EUR at the EUR side's scale 2.
        const res = await admin(service, 'PATCH', `/admin/v1/exchange/directions/${id}`, { fee_side: 'to' });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.code, 'invalid_fields');
        assert.deepEqual(res.body.fields, [{ key: 'fee_fixed', reason: 'required_with_fee_side' }]);
        const unchanged = await admin(service, 'GET', `/admin/v1/exchange/directions/${id}`);
        assert.equal(unchanged.body.fee_side, 'from');
        assert.equal(unchanged.body.fee_fixed, '0.500000');
        // Restated in the new fee asset, the move is accepted.
        const moved = await direction(id, { fee_side: 'to', fee_fixed: '0.25' });
        assert.equal(moved.fee_asset, 'EUR');
        assert.equal(moved.fee_fixed, '0.25');
        const m = await member();
        const q = await client.exchange.quote(
          { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100' },
          { onBehalfOf: m },
        );
        assert.equal(q.fee_asset, 'EUR');
        assert.equal(q.fee_amount, '0.35', '10 bps of the gross 92.31 EUR (rounded up) plus the fixed 0.25 EUR');
      } finally {
        await direction(id, { fee_side: 'from', fee_fixed: '0' });
      }
      // No fixed part: nothing to restate, the side alone may move.
      assert.equal((await direction(id, { fee_side: 'to' })).fee_fixed, '0.00');
      await direction(id, { fee_side: 'from' });
    },
  );
  it(
    'a lock executes at its numbers one second before its end on the sandbox clock; at its end it is refused ' +
      '(never re-priced)',
    async () => {
      const { client: c } = await newMerchantClient(service);
      const m = await member({ c });
      const t0 = Date.parse((await c.sandbox.clock()).now);
      const early = await lockedQuote(m, 'USDT', 'BTC', '100', c);
      const t1 = Date.parse((await c.sandbox.clock()).now);
      const late = await lockedQuote(m, 'USDT', 'BTC', '100', c);
      const end = Date.parse(early.quote_expires_at!) - early.quote_ttl_sec * 1000;
      assert.ok(end >= t0 && end <= t1, "the lock window is quote_ttl_sec from the quote, on the merchant's clock");
      await c.sandbox.advanceClock(early.quote_ttl_sec - 1);
      const done = await c.exchange.execute({ quote_id: early.quote_id! }, { onBehalfOf: m });
      assert.equal(done.rate, early.rate);
      assert.equal(done.to_amount, early.to_amount);
      assert.equal(done.fee_amount, early.fee_amount);
      await c.sandbox.advanceClock(1);
      await expectCode(c.exchange.execute({ quote_id: late.quote_id! }, { onBehalfOf: m }), 'state_invalid', 400);
      assert.equal((await c.exchange.get(late.quote_id!, { onBehalfOf: m })).status, 'expired');
    },
  );

  it(
    'lists filter by status; a member sees its own orders, the merchant all of them; unused or expired locks ' +
      'do not count toward the daily count',
    async () => {
      const { client: c } = await newMerchantClient(service);
      const a = await member({ c });
      const b = await member({ c });
      const id = 'exd_s_usdt_usdc';
      const before = (await admin(service, 'GET', `/admin/v1/exchange/directions/${id}`)).body.member_daily_count;
      await direction(id, { member_daily_count: 1 });
      try {
        const unused = await lockedQuote(a, 'USDT', 'USDC', '10', c);
        const toExpire = await lockedQuote(a, 'USDT', 'USDC', '10', c);
        await c.sandbox.advanceClock(1);
        const kept = await lockedQuote(a, 'USDT', 'USDC', '10', c);
        await c.sandbox.advanceClock(unused.quote_ttl_sec - 1);
        assert.equal((await c.exchange.get(toExpire.quote_id!, { onBehalfOf: a })).status, 'expired');
        const done = await c.exchange.execute({ quote_id: kept.quote_id! }, { onBehalfOf: a });
        await expectCode(
          c.exchange.execute({ from_asset: 'USDT', to_asset: 'USDC', from_amount: '10' }, { onBehalfOf: a }),
          'limit_exceeded',
          400,
        );
        const other = await c.exchange.execute(
          { from_asset: 'USDT', to_asset: 'USDC', from_amount: '10' },
          { onBehalfOf: b },
        );
        const ids = (list: { id: string }[]) => list.map((o) => o.id).sort();
        assert.deepEqual(ids(await c.exchange.list({ onBehalfOf: a, status: 'completed' })), [done.id]);
        assert.deepEqual(
          ids(await c.exchange.list({ onBehalfOf: a, status: 'expired' })),
          ids([unused, toExpire].map((q) => ({ id: q.quote_id! }))),
        );
        assert.deepEqual(await c.exchange.list({ onBehalfOf: a, status: 'quoted' }), []);
        assert.deepEqual(ids(await c.exchange.list({ onBehalfOf: b })), [other.id]);
        assert.deepEqual(ids(await c.exchange.list({ status: 'completed' })), ids([done, other]));
        assert.equal((await c.exchange.list()).length, 4);
        await expectCode(c.exchange.get(done.id, { onBehalfOf: b }), 'not_found', 404);
      } finally {
        await direction(id, { member_daily_count: before });
      }
    },
  );

  it(
    "a lock does not fix the member's disposition: a member suspended after the lock cannot execute it, and " +
      'nothing moves',
    async () => {
      const m = await member();
      const q = await lockedQuote(m, 'USDT', 'EUR', '40');
      await client.members.suspend(m);
      await expectCode(client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m }), 'member_not_found', 404);
      assert.equal((await client.exchange.get(q.quote_id!)).status, 'quoted');
      assert.equal(await entryCount(q.quote_id!), 0);
    },
  );

  it(
    'each execution posts the documented lines: the member spends from_amount and gets to_amount, the fee goes ' +
      'to the merchant in fee_asset, on either side',
    async () => {
      const m = await member();
      const lines = async (id: string) =>
        (
          await service.ctx.db
            .selectFrom('postings as p')
            .innerJoin('ledger_accounts as l', 'l.id', 'p.account_id')
            .innerJoin('journal_entries as e', 'e.id', 'p.entry_id')
            .select(['e.kind', 'l.asset', 'l.owner_type', 'l.bucket', 'p.amount'])
            .where('e.reference_id', '=', id)
            .execute()
        )
          .map(
            (r) =>
              `${r.kind} ${r.asset} ${r.owner_type}.${r.bucket} ` +
              `${BigInt(r.amount) > 0n ? `debit ${r.amount}` : `credit ${-BigInt(r.amount)}`}`,
          )
          .sort();
      const minor = (amount: string) => amount.replace('.', '').replace(/^0+(?=\d)/, '');
      /** docs/exchange.md "Posting rules": the fee is the merchant's (fee_retained to fee_income) in the fee asset's
       * entry. */
      const documented = (o: {
        from_asset: string;
        to_asset: string;
        from_amount: string;
        to_amount: string;
        fee_amount: string;
        fee_asset: string;
      }) => {
        const [from, to, fee] = [minor(o.from_amount), minor(o.to_amount), minor(o.fee_amount)];
        const kindOf = o.fee_asset === o.from_asset ? `exchange.sell ${o.from_asset}` : `exchange.buy ${o.to_asset}`;
        return [
          `exchange.sell ${o.from_asset} member.available debit ${from}`,
          `exchange.sell ${o.from_asset} platform.settlement_clearing credit ${from}`,
          `exchange.buy ${o.to_asset} platform.settlement_clearing debit ${to}`,
          `exchange.buy ${o.to_asset} member.available credit ${to}`,
          `${kindOf} merchant.fee_retained debit ${fee}`,
          `${kindOf} merchant.fee_income credit ${fee}`,
        ].sort();
      };
      for (const [to, feeAsset] of [
        ['EUR', 'USDT'],
        ['BTC', 'BTC'],
      ] as const) {
        const order = await client.exchange.execute(
          { from_asset: 'USDT', to_asset: to, from_amount: '100' },
          { onBehalfOf: m },
        );
        assert.equal(order.fee_asset, feeAsset, "the catalogue puts this direction's fee on this side");
        assert.notEqual(minor(order.fee_amount), '0');
        assert.deepEqual(await lines(order.id), documented(order));
      }
    },
  );

  it(
    'each state change writes one exchange.order.<status> event with ids and status only: quoted@1 then ' +
      'completed@2 for a lock, completed@1 for a market order',
    async () => {
      const m = await member();
      const q = await lockedQuote(m, 'USDT', 'EUR', '30');
      await client.exchange.execute({ quote_id: q.quote_id! }, { onBehalfOf: m });
      const market = await client.exchange.execute(
        { from_asset: 'USDT', to_asset: 'EUR', from_amount: '30' },
        { onBehalfOf: m },
      );
      const events = await service.ctx.db
        .selectFrom('events')
        .select([
          'type',
          'object',
          'object_id',
          'external_member_id',
          'status',
          'status_version',
          'merchant_id',
          'livemode',
        ])
        .where('object_id', 'in', [q.quote_id!, market.id])
        .orderBy('seq')
        .execute();
      const envelope = { object: 'exchange_order', external_member_id: m, merchant_id: merchantId, livemode: false };
      assert.deepEqual(events, [
        { ...envelope, type: 'exchange.order.quoted', object_id: q.quote_id, status: 'quoted', status_version: 1 },
        {
          ...envelope,
          type: 'exchange.order.completed',
          object_id: q.quote_id,
          status: 'completed',
          status_version: 2,
        },
        { ...envelope, type: 'exchange.order.completed', object_id: market.id, status: 'completed', status_version: 1 },
      ]);
    },
  );
});
