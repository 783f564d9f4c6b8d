/**
 * The money paths under real concurrency: many requests at once through the HTTP API against the
 * same member and the same objects, on PostgreSQL (the embedded database has one connection, so
 * its transactions take turns and nothing races there). After each burst the invariants hold:
 * no available balance below zero, each asset's postings summing to zero, no movement posted
 * twice, each object in one final state that agrees with its entries and with every answer given
 * about it, and each idempotency key with one result.
 */
import { afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient, RawResult } from '@merchant-wallet/sdk';
import { accountBalance, verifyLedger } from '../src/money/index.js';
import { admin, newMerchantClient } from './support/service.js';
import { describeOnPostgres, drainWork } from './support/concurrency.js';
import { payNow } from './support/emv.js';
import { addSandboxOffset } from '../src/platform/queries/clock.js';
import { earnTickers } from '../src/modules/earn/workers.js';
import { exchangeTickers } from '../src/modules/exchange/workers.js';
import { approvedCard, kycMember, sepaPayee, withUpstream, TRON, rowById } from './support/fixtures.js';

describeOnPostgres('money paths under concurrency on PostgreSQL', 10, (service) => {
  const db = () => service().ctx.db;
  /** A merchant of its own per case: its own sandbox behaviours, clock and rate windows. */
  let client: MerchantWalletClient;
  let merchantId: string;
  const fresh = async () => ({ client, merchantId } = await newMerchantClient(service()));

  const post = (path: string, body?: unknown, opts: { member?: string; key?: string } = {}): Promise<RawResult> =>
    client.requestRaw({
      method: 'POST',
      path,
      body,
      onBehalfOf: opts.member,
      idempotencyKey: opts.key ?? randomUUID(),
    });
  const statuses = (rs: RawResult[]) =>
    rs.map((r) => (r.status < 300 ? r.status : `${r.status} ${(r.body as { code: string }).code}`));
  const count = (rs: unknown[], f: (x: any) => boolean) => rs.filter(f).length;
  const body = (r: RawResult) => r.body as any;
  const drain = () => drainWork(service());

  /** A member of a fresh merchant at KYC level 1 holding `deposits`. */
  async function member(deposits: Record<string, string>) {
    await fresh();
    return kycMember(service(), client, { prefix: 'ca', deposits });
  }
  /** `n` of the answers are `status`; each of the others is refused with one of `codes`. */
  function winners(rs: RawResult[], status: number, n: number, codes: string[], why = '') {
    const seen = JSON.stringify(statuses(rs));
    assert.equal(
      count(rs, (r) => r.status === status),
      n,
      why ? `${why}: ${seen}` : seen,
    );
    assert.ok(
      rs.every((r) => r.status === status || codes.includes(body(r).code)),
      seen,
    );
  }
  type Stateful =
    | 'withdrawals'
    | 'exchange_orders'
    | 'remit_orders'
    | 'earn_orders'
    | 'card_topups'
    | 'card_transactions'
    | 'qrpay_orders';
  /** An object's status and status version, read from its table. */
  const stateOf = (table: Stateful, id: string) =>
    db().selectFrom(table).select(['status', 'status_version']).where('id', '=', id).executeTakeFirstOrThrow();
  /**
   * The operator's decisions `asked` (final statuses) on one open object (its resolve path), sent at once while
   * `alongside` runs (reconciliation): answers the object's state once they are answered, one of those asked.
   * The decision it took is answered with the object in that status; each other one with 400 `state_invalid`.
   */
  async function decideAtOnce(
    resolvePath: string,
    asked: string[],
    alongside: () => Promise<unknown>,
    state: () => Promise<{ status: string; status_version: number }>,
  ) {
    const [rs] = await Promise.all([
      Promise.all(asked.map((status) => admin(service(), 'POST', resolvePath, { status }))),
      alongside(),
    ]);
    const row = await state();
    assert.ok(asked.includes(row.status), row.status);
    rs.forEach((r, i) => {
      if (asked[i] === row.status)
        assert.deepEqual([r.status, r.body.status], [200, row.status], JSON.stringify(r.body));
      else
        assert.deepEqual(
          [r.status, r.body.code],
          [400, 'state_invalid'],
          `asked ${asked[i]}, it is ${row.status}: ${JSON.stringify(r.body)}`,
        );
    });
    return row;
  }
  /** The body of a request sent while `upstream` times out, once its jobs have run (an order left processing). */
  const sentWhileTimingOut = (upstream: string, send: () => Promise<RawResult>) =>
    withUpstream(client, upstream, 'timeout', async () => {
      const r = await send();
      await service().workers.jobs.drain();
      return body(r);
    });
  /** The same request sent `n` times at once. */
  const burst = (n: number, send: () => Promise<RawResult>) => Promise.all(Array.from({ length: n }, send));
  const balance = async (external: string, asset: string) =>
    ((await client.balances.list({ onBehalfOf: external })) as any[]).find((b) => b.asset === asset) ?? {};
  /** The kinds of the entries posted for one object, sorted. */
  const entryKinds = async (referenceId: string) =>
    (await db().selectFrom('journal_entries').select('kind').where('reference_id', '=', referenceId).execute())
      .map((e) => e.kind)
      .sort();

  /**
   * What must hold after every burst, over the whole database: the ledger's own check (every
   * entry and every asset sums to zero, stored balances equal their postings, nothing owned is
   * negative, custody), restated here for the three the audit is about, and no claim left on an
   * idempotency key once every request has been answered.
   */
  async function invariants() {
    const report = await verifyLedger(db());
    assert.deepEqual(report.problems, [], 'the ledger verifies');
    const unbalanced = await sql<{ environment: string; asset: string; total: string }>`
      SELECT e.environment, p.asset, sum(p.amount)::text AS total FROM postings p JOIN journal_entries e ON e.id =
        p.entry_id
      GROUP BY e.environment, p.asset HAVING sum(p.amount) <> 0`.execute(db());
    assert.deepEqual(unbalanced.rows, [], "each asset's postings sum to zero");
    const negative = await sql<{
      id: string;
    }>`SELECT id::text FROM ledger_accounts WHERE non_negative AND balance < 0`.execute(db());
    assert.deepEqual(negative.rows, [], 'no member or merchant balance below zero');
    const twice = await sql<{ reference_id: string }>`
      SELECT reference_id FROM journal_entries GROUP BY environment, reference_type, reference_id, kind HAVING
        count(*) > 1`.execute(db());
    assert.deepEqual(twice.rows, [], 'no movement posted twice');
    const events = await sql<{ object_id: string }>`
      SELECT object_id FROM events WHERE status_version > 0 GROUP BY object, object_id, status_version HAVING count(*)
        > 1`.execute(db());
    assert.deepEqual(events.rows, [], 'one event per status of an object');
    const claims = await db()
      .selectFrom('idempotency_keys')
      .select('key')
      .where('status_code', '=', 0)
      .where('response_body', 'not like', '%retry_with_same_key%')
      .execute();
    assert.deepEqual(claims, [], 'no key left claimed once its requests were answered');
  }
  // Every test ends with them holding.
  afterEach(invariants);

  /**
   * One idempotency key, one result: exactly one request executed (no replay header); every other
   * one is that result replayed byte for byte, or 409 `idempotency_in_progress`.
   */
  function oneResult(rs: RawResult[]): RawResult {
    const executed = rs.filter((r) => r.headers['x-idempotent-replay'] === undefined && r.status !== 409);
    assert.equal(executed.length, 1, `one execution: ${JSON.stringify(statuses(rs))}`);
    const first = executed[0]!;
    for (const r of rs) {
      if (r === first) continue;
      if (r.status === 409) {
        assert.equal(body(r).code, 'idempotency_in_progress');
        continue;
      }
      assert.equal(r.headers['x-idempotent-replay'], 'true');
      assert.equal(r.status, first.status);
      assert.equal(r.rawBody, first.rawBody, 'the replay is the first answer');
    }
    return first;
  }

  it('withdrawals exceeding the balance: exactly as many as it covers are locked', async () => {
    const m = await member({ USDT: '100' });
    const rs = await burst(25, () =>
      post('/v1/withdrawals', { asset: 'USDT', network: 'TRON', address: TRON, amount: '9' }, { member: m.external }),
    );
    winners(rs, 201, 10, ['insufficient_balance'], '10 × (9 + fee 1) = 100');
    const b = await balance(m.external, 'USDT');
    assert.deepEqual([b.available, b.withdrawing], ['0.000000', '100.000000']);
    const rows = await db().selectFrom('withdrawals').select('id').where('member_id', '=', m.id).execute();
    assert.equal(rows.length, 10, 'refused withdrawals left no row');
    for (const { id } of rows) assert.deepEqual(await entryKinds(id), ['withdrawal.lock']);
  });

  it(
    'confirm and fail of the same withdrawals at once: each ends settled or failed, agreeing with its ' +
      'entries and every answer',
    async () => {
      const m = await member({ USDT: '100' });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(
          body(
            await post(
              '/v1/withdrawals',
              { asset: 'USDT', network: 'TRON', address: TRON, amount: '5' },
              { member: m.external },
            ),
          ).id,
        );
      const calls = ids.flatMap((id) =>
        ['confirm', 'fail', 'confirm', 'fail', 'confirm', 'fail'].map((action) => ({ id, action })),
      );
      const rs = await Promise.all(calls.map(({ id, action }) => post(`/v1/withdrawals/${id}/${action}`)));
      let settled = 0;
      for (const id of ids) {
        const mine = calls.map((c, i) => ({ ...c, r: rs[i]! })).filter((c) => c.id === id);
        const row = await stateOf('withdrawals', id);
        assert.ok(row.status === 'settled' || row.status === 'failed', row.status);
        assert.equal(row.status_version, 2, 'moved once');
        const won = row.status === 'settled' ? 'confirm' : 'fail';
        for (const { action, r } of mine) {
          if (action === won) assert.equal(r.status, 200, JSON.stringify(r.body));
          else assert.deepEqual([r.status, body(r).code], [400, 'order_not_cancellable']);
        }
        if (won === 'confirm')
          assert.equal(
            count(mine, (c) => c.action === 'confirm' && body(c.r).replayed === false),
            1,
            'one confirm posted',
          );
        assert.deepEqual(
          await entryKinds(id),
          ['withdrawal.lock', won === 'confirm' ? 'withdrawal.confirm' : 'withdrawal.fail'].sort(),
        );
        if (won === 'confirm') settled++;
      }
      const b = await balance(m.external, 'USDT');
      assert.deepEqual([b.available, b.withdrawing], [`${100 - 6 * settled}.000000`, '0.000000']);
    },
  );

  it(
    'a locked quote executed many times at once with different keys executes once; a second quote the ' +
      'balance no longer covers stays quoted',
    async () => {
      const m = await member({ USDT: '150' });
      const quote = async () =>
        body(
          await post(
            '/v1/exchange/quotes',
            { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100', lock: true },
            { member: m.external },
          ),
        ).quote_id as string;
      const [a, b] = [await quote(), await quote()];
      const calls = Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b));
      const rs = await Promise.all(
        calls.map((quote_id) => post('/v1/exchange/orders', { quote_id }, { member: m.external })),
      );
      winners(rs, 201, 1, ['state_invalid', 'insufficient_balance']);
      const executed = body(rs.find((r) => r.status === 201)!);
      const other = executed.id === a ? b : a;
      const orders = await db()
        .selectFrom('exchange_orders')
        .select(['id', 'status', 'status_version'])
        .where('id', 'in', [a, b])
        .execute();
      assert.deepEqual(
        orders.map((o) => [o.id, o.status, o.status_version]).sort(),
        [
          [executed.id, 'completed', 2],
          [other, 'quoted', 1],
        ].sort(),
      );
      assert.deepEqual(await entryKinds(executed.id), ['exchange.buy', 'exchange.sell']);
      assert.deepEqual(await entryKinds(other), []);
      assert.equal((await balance(m.external, 'USDT')).available, '50.000000');
      assert.equal((await balance(m.external, 'EUR')).available, executed.to_amount);
    },
  );

  it('a locked quote executed while its expiry runs: completed with its entries, or expired with none', async () => {
    const m = await member({ USDT: '1000' });
    const quote = body(
      await post(
        '/v1/exchange/quotes',
        { from_asset: 'USDT', to_asset: 'EUR', from_amount: '100', lock: true },
        { member: m.external },
      ),
    );
    // The merchant's clock a few milliseconds before the lock ends (moved without running anything):
    // the expiry ticker and the executions then meet at its end.
    const left =
      new Date(quote.quote_expires_at).getTime() -
      (await service().ctx.clock.now(db(), { merchantId, environment: 'sandbox' })).getTime();
    await addSandboxOffset(db(), merchantId, BigInt(left - 25));
    const expire = async () => {
      for (let i = 0; i < 12; i++) {
        await exchangeTickers[0]!.run(service().ctx);
        await new Promise((r) => setTimeout(r, 8));
      }
    };
    const [, rs] = await Promise.all([
      expire(),
      burst(6, () => post('/v1/exchange/orders', { quote_id: quote.quote_id }, { member: m.external })),
    ]);
    await exchangeTickers[0]!.run(service().ctx);
    const row = await stateOf('exchange_orders', quote.quote_id);
    assert.ok(row.status === 'completed' || row.status === 'expired', row.status);
    assert.equal(row.status_version, 2, 'moved once');
    winners(rs, 201, row.status === 'completed' ? 1 : 0, ['state_invalid']);
    assert.deepEqual(
      await entryKinds(quote.quote_id),
      row.status === 'completed' ? ['exchange.buy', 'exchange.sell'] : [],
    );
    assert.equal(
      (await balance(m.external, 'USDT')).available,
      row.status === 'completed' ? '900.000000' : '1000.000000',
    );
  });

  it(
    'remittances exceeding the balance: exactly as many as it covers are frozen, ' + 'each then completes once',
    async () => {
      const m = await member({ USDT: '1000' });
      const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: m.external });
      const rs = await burst(12, () =>
        post(
          '/v1/remittances',
          { payee_id: payee.id, source_asset: 'USDT', source_amount: '100' },
          { member: m.external },
        ),
      );
      // 100 plus a fee of 1.583250 each: nine fit in 1000.
      winners(rs, 201, 9, ['insufficient_balance']);
      let b = await balance(m.external, 'USDT');
      assert.deepEqual([b.available, b.frozen], ['85.750750', '914.249250']);
      await drain();
      const orders = await db()
        .selectFrom('remit_orders')
        .select(['id', 'status'])
        .where('member_id', '=', m.id)
        .execute();
      assert.equal(orders.length, 9);
      for (const o of orders) {
        assert.equal(o.status, 'completed');
        assert.deepEqual(await entryKinds(o.id), ['remittance.complete', 'remittance.freeze']);
      }
      b = await balance(m.external, 'USDT');
      assert.deepEqual([b.available, b.frozen], ['85.750750', '0.000000']);
    },
  );

  /**
   * One open object of each kind the operator decides on: how it is left processing (`open`, for member `m`),
   * its table and resolve path, what runs alongside the decisions, and the entries each final status posts.
   */
  const openObjects: {
    title: string;
    deposits: Record<string, string>;
    open: (m: { id: string; external: string }) => Promise<string>;
    table: Stateful;
    resolvePath: (id: string) => string;
    asked: string[];
    alongside: () => Promise<unknown>;
    /** The status version the decision leaves, and why. */
    version?: [number, string];
    entries: (status: string) => string[];
    /** The asset frozen while the object was open, and that asset's zero. */
    released: [string, string];
  }[] = [
    {
      title: 'operator decisions on one open remittance at once',
      deposits: { USDT: '1000' },
      open: async (m) => {
        const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: m.external });
        const order = await sentWhileTimingOut('remittance', () =>
          post(
            '/v1/remittances',
            { payee_id: payee.id, source_asset: 'USDT', source_amount: '100' },
            { member: m.external },
          ),
        );
        return order.id;
      },
      table: 'remit_orders',
      resolvePath: (id) => `/admin/v1/remittances/${id}/resolve`,
      asked: ['completed', 'failed', 'completed', 'failed', 'failed', 'completed'],
      alongside: () => admin(service(), 'POST', '/admin/v1/remittances/reconciliation/run', {}),
      entries: (status) => ['remittance.freeze', status === 'completed' ? 'remittance.complete' : 'remittance.fail'],
      released: ['USDT', '0.000000'],
    },
    {
      title: 'operator decisions on one open card top-up at once',
      deposits: { USDT: '300' },
      open: async (m) => {
        const cardId = await approvedCard(client, m.external);
        const topup = await sentWhileTimingOut('card', () =>
          post(`/v1/cards/${cardId}/topups`, { amount: '20', source_asset: 'USDT' }, { member: m.external }),
        );
        return topup.id;
      },
      table: 'card_topups',
      resolvePath: (id) => `/admin/v1/cards/topups/${id}/resolve`,
      asked: ['credited', 'failed', 'failed', 'credited', 'failed', 'credited'],
      alongside: () => service().workers.tick(),
      version: [3, 'moved once after the dispatch'],
      entries: (status) =>
        status === 'credited'
          ? ['card.topup_credit', 'card.topup_freeze', 'card.topup_settle']
          : ['card.topup_fail', 'card.topup_freeze'],
      released: ['USDT', '0.000000'],
    },
    {
      title: 'QR pay: operator decisions and reconciliation of one open payment at once',
      deposits: { SGD: '100' },
      open: async (m) => {
        const r = await withUpstream(client, 'qrpay', 'timeout', () =>
          post('/v1/qrpay/payments', { qr_code: payNow({ amount: '10' }), asset: 'SGD' }, { member: m.external }),
        );
        assert.equal(body(r).code, 'upstream_timeout');
        const order = await db()
          .selectFrom('qrpay_orders')
          .select('id')
          .where('member_id', '=', m.id)
          .executeTakeFirstOrThrow();
        // Due for reconciliation now, so the tick alongside the decisions checks it.
        await db()
          .updateTable('qrpay_orders')
          .set({ next_check_at: new Date(0) })
          .where('id', '=', order.id)
          .execute();
        return order.id;
      },
      table: 'qrpay_orders',
      resolvePath: (id) => `/admin/v1/qrpay/payments/${id}/resolve`,
      asked: ['completed', 'failed', 'failed', 'completed', 'failed', 'completed'],
      alongside: () => service().workers.tick(),
      version: [2, 'moved once'],
      entries: (status) => ['qrpay.freeze', status === 'completed' ? 'qrpay.complete' : 'qrpay.fail'],
      released: ['SGD', '0.00'],
    },
  ];
  for (const o of openObjects)
    it(`${o.title}: one final state; each answer is the decision taken or state_invalid`, async () => {
      const m = await member(o.deposits);
      const id = await o.open(m);
      assert.equal((await stateOf(o.table, id)).status, 'processing');
      const row = await decideAtOnce(o.resolvePath(id), o.asked, o.alongside, () => stateOf(o.table, id));
      if (o.version) {
        const [version, why] = o.version;
        assert.equal(row.status_version, version, why);
      }
      assert.deepEqual(await entryKinds(id), o.entries(row.status).sort());
      const [asset, zero] = o.released;
      assert.equal((await balance(m.external, asset)).frozen, zero);
    });

  it(
    'earn: redeeming one position many times while subscribing from the same balance: redeemed once, nothing ' +
      'lost or made',
    async () => {
      const m = await member({ USDT: '1000' });
      const flexible = (await client.earn.products()).find((p) => p.type === 'flexible')!;
      const order = body(
        await post('/v1/earn/orders', { product_id: flexible.id, amount: '500' }, { member: m.external }),
      );
      const calls = [
        'redeem',
        'subscribe',
        'redeem',
        'subscribe',
        'subscribe',
        'redeem',
        'subscribe',
        'subscribe',
        'redeem',
        'subscribe',
      ];
      const rs = await Promise.all(
        calls.map((c) =>
          c === 'redeem'
            ? post(`/v1/earn/positions/${order.position_id}/redeem`, undefined, { member: m.external })
            : post('/v1/earn/orders', { product_id: flexible.id, amount: '150' }, { member: m.external }),
        ),
      );
      const redeems = rs.filter((_, i) => calls[i] === 'redeem');
      const subscribes = rs.filter((_, i) => calls[i] === 'subscribe');
      winners(redeems, 200, 1, ['state_invalid']);
      assert.ok(
        subscribes.every((r) => r.status === 201 || body(r).code === 'insufficient_balance'),
        JSON.stringify(statuses(subscribes)),
      );
      const subscribed = count(subscribes, (r) => r.status === 201);
      assert.ok(subscribed >= 3, `500 available covers three at least: ${JSON.stringify(statuses(subscribes))}`);
      assert.equal((await stateOf('earn_orders', order.id)).status, 'redeemed');
      assert.deepEqual(await entryKinds(order.id), ['earn.redeem', 'earn.subscribe']);
      const b = await balance(m.external, 'USDT');
      assert.deepEqual([b.available, b.earn], [`${1000 - 150 * subscribed}.000000`, `${150 * subscribed}.000000`]);
    },
  );

  it(
    'earn: redeeming a flexible position while the daily process pays its interest: each day paid once, by ' +
      'one of them, redeemed once',
    async () => {
      const m = await member({ USDT: '1000' });
      const flexible = (await client.earn.products()).find((p) => p.type === 'flexible')!;
      const order = body(
        await post('/v1/earn/orders', { product_id: flexible.id, amount: '1000' }, { member: m.external }),
      );
      // Three days pass on the merchant's clock with nothing run: the days are due to the ticker and
      // to a redemption alike (it pays the finished days first).
      await addSandboxOffset(db(), merchantId, BigInt(3 * 86_400_000 + 60_000));
      const accrue = async () => {
        for (let i = 0; i < 3; i++) await earnTickers[0]!.run(service().ctx);
      };
      const [, , rs] = await Promise.all([
        accrue(),
        accrue(),
        burst(4, () => post(`/v1/earn/positions/${order.position_id}/redeem`, undefined, { member: m.external })),
      ]);
      winners(rs, 200, 1, ['state_invalid']);
      const row = await rowById(service(), 'earn_orders', order.id);
      assert.deepEqual([row.status, row.days_accrued], ['redeemed', 3]);
      assert.deepEqual(await entryKinds(order.id), [
        'earn.payout.d1',
        'earn.payout.d2',
        'earn.payout.d3',
        'earn.redeem',
        'earn.subscribe',
      ]);
      const paid = await sql<{
        total: string;
      }>`SELECT coalesce(sum(-p.amount), 0)::text AS total FROM postings p JOIN journal_entries e ON e.id = p.entry_id
      JOIN ledger_accounts a ON a.id = p.account_id WHERE e.reference_id = ${order.id} AND e.kind LIKE 'earn.payout%'
        AND a.owner_type = 'member'`.execute(db());
      assert.equal(paid.rows[0]!.total, String(row.interest_paid), 'the interest paid is what the order says');
      assert.equal(String(row.interest_paid), '300000', '3 days of 3.65 % a year on 1000');
      const b = await balance(m.external, 'USDT');
      assert.deepEqual([b.available, b.earn], ['1000.300000', '0.000000']);
    },
  );

  it(
    'card: top-ups, authorisations and closes of one card at once: closed once, every top-up failed or ' +
      "credited, the card's money all accounted for",
    async () => {
      const m = await member({ USDT: '300' });
      const cardId = await approvedCard(client, m.external);
      assert.equal(
        body(await post(`/v1/cards/${cardId}/topups`, { amount: '50', source_asset: 'USDT' }, { member: m.external }))
          .status,
        'pending',
      );
      await drain();
      const cents = (s: string) => BigInt(s.replace('.', ''));
      const loaded = cents((await balance(m.external, 'USD')).card);
      assert.ok(loaded > 4000n, 'the first top-up is on the card');

      const calls = [
        'topup',
        'auth',
        'topup',
        'close',
        'auth',
        'topup',
        'auth',
        'close',
        'topup',
        'auth',
        'topup',
        'auth',
        'auth',
      ];
      const rs = await Promise.all(
        calls.map((c) => {
          if (c === 'topup')
            return post(`/v1/cards/${cardId}/topups`, { amount: '20', source_asset: 'USDT' }, { member: m.external });
          if (c === 'close') return post(`/v1/cards/${cardId}/close`, undefined, { member: m.external });
          return post(`/v1/sandbox/cards/${cardId}/authorizations`, {
            amount: '12',
            merchant_name: 'SHOP',
            mcc: '5411',
          });
        }),
      );
      const of = (kind: string) => rs.filter((_, i) => calls[i] === kind);
      for (const r of of('close'))
        assert.ok(r.status === 200 && ['closing', 'closed'].includes(body(r).status), JSON.stringify(r.body));
      for (const r of of('topup'))
        assert.ok(r.status === 201 || body(r).code === 'state_invalid', JSON.stringify(r.body));
      for (const r of of('auth')) assert.equal(r.status, 200, JSON.stringify(r.body));
      // The close and each top-up exclude each other: a top-up accepted before the close is failed by
      // it (its freeze back at once), one after it is refused; none is left pending on a closed card.
      const burstTopUps = await db()
        .selectFrom('card_topups')
        .select(['status', 'failure_reason'])
        .where('card_id', '=', cardId)
        .where('status', '!=', 'credited')
        .execute();
      assert.deepEqual(
        burstTopUps.filter((t) => t.status !== 'failed' || t.failure_reason !== 'card_closing'),
        [],
        'no top-up accepted on a closing card',
      );
      assert.equal(
        burstTopUps.length,
        count(of('topup'), (r) => r.status === 201),
      );
      assert.equal((await balance(m.external, 'USDT')).frozen, '0.000000', "the close released every top-up's freeze");
      await drain();

      const card = await rowById(service(), 'cards', cardId);
      assert.equal(card.status, 'closed');
      assert.deepEqual(await entryKinds(`${cardId}:close`), ['card.balance_return']);
      const topups = await db()
        .selectFrom('card_topups')
        .selectAll()
        .where('card_id', '=', cardId)
        .orderBy('seq')
        .execute();
      assert.equal(topups.length, 1 + count(of('topup'), (r) => r.status === 201), 'a refused top-up left no row');
      let credited = 0n;
      for (const t of topups) {
        assert.ok(t.status === 'credited' || t.status === 'failed', `${t.id} is ${t.status}`);
        assert.deepEqual(
          await entryKinds(t.id),
          t.status === 'credited'
            ? ['card.topup_credit', 'card.topup_freeze', 'card.topup_settle']
            : ['card.topup_fail', 'card.topup_freeze'],
        );
        if (t.status === 'credited') credited += BigInt(t.arrival_amount);
      }
      const approved = BigInt(count(of('auth'), (r) => body(r).approved === true));
      const account = (bucket: 'card' | 'card_held') =>
        accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket, cardId }, 'USD');
      assert.equal(await account('card'), 0n, "the card's balance returned");
      assert.equal(await account('card_held'), approved * 1200n, 'approved authorisations stay held');
      // What arrived on the card is either held by an approved authorisation or back on available.
      const usd = await balance(m.external, 'USD');
      assert.equal(usd.frozen, '0.00');
      assert.equal(cents(usd.available) + approved * 1200n, credited, `credited ${credited}, ${approved} approved`);
      assert.equal((await balance(m.external, 'USDT')).frozen, '0.000000', "every failed top-up's freeze is back");
    },
  );

  it(
    'QR pay: the same payment sent many times at once pays once; the same code under new keys only while the ' +
      'balance covers it',
    async () => {
      const m = await member({ SGD: '100' });
      const qr = payNow({ amount: '30' });
      const key = randomUUID();
      const same = await burst(8, () =>
        post('/v1/qrpay/payments', { qr_code: qr, asset: 'SGD' }, { member: m.external, key }),
      );
      const paid = body(oneResult(same));
      assert.equal(paid.status, 'completed');
      const others = await burst(6, () =>
        post('/v1/qrpay/payments', { qr_code: qr, asset: 'SGD' }, { member: m.external }),
      );
      winners(others, 201, 2, ['insufficient_balance']);
      const orders = await db()
        .selectFrom('qrpay_orders')
        .select(['id', 'status'])
        .where('member_id', '=', m.id)
        .execute();
      assert.equal(orders.length, 3, 'one order per key that paid');
      for (const o of orders)
        assert.deepEqual([o.status, await entryKinds(o.id)], ['completed', ['qrpay.complete', 'qrpay.freeze']]);
      // The operator refunds the first payment from several places at once: refunded once.
      const refunds = await Promise.all(
        Array.from({ length: 5 }, () => admin(service(), 'POST', `/admin/v1/qrpay/payments/${paid.id}/refund`, {})),
      );
      assert.ok(
        refunds.every((r) => r.status === 200 && r.body.status === 'refunded'),
        JSON.stringify(refunds.map((r) => r.body)),
      );
      assert.equal(
        count(refunds, (r) => r.body.replayed === false),
        1,
      );
      assert.deepEqual(await entryKinds(paid.id), ['qrpay.complete', 'qrpay.freeze', 'qrpay.refund']);
      const b = await balance(m.external, 'SGD');
      assert.deepEqual([b.available, b.frozen], ['40.00', '0.00']);
    },
  );

  it(
    'one idempotency key sent many times at once with the same body: one execution, the rest replay it or ' +
      'are told it is in progress',
    async () => {
      const m = await member({ USDT: '1000' });
      const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: m.external });
      const flexible = (await client.earn.products()).find((p) => p.type === 'flexible')!;
      const cardId = await approvedCard(client, m.external);
      const writes: Array<{
        path: string;
        body: unknown;
        table: 'withdrawals' | 'earn_orders' | 'remit_orders' | 'exchange_orders' | 'card_topups';
      }> = [
        {
          path: '/v1/withdrawals',
          body: { asset: 'USDT', network: 'TRON', address: TRON, amount: '10' },
          table: 'withdrawals',
        },
        { path: '/v1/earn/orders', body: { product_id: flexible.id, amount: '10' }, table: 'earn_orders' },
        {
          path: '/v1/remittances',
          body: { payee_id: payee.id, source_asset: 'USDT', source_amount: '10' },
          table: 'remit_orders',
        },
        {
          path: '/v1/exchange/orders',
          body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10' },
          table: 'exchange_orders',
        },
        { path: `/v1/cards/${cardId}/topups`, body: { amount: '10', source_asset: 'USDT' }, table: 'card_topups' },
      ];
      const before = await balance(m.external, 'USDT');
      const bursts = await Promise.all(
        writes.map((w) => {
          const key = randomUUID();
          return burst(6, () => post(w.path, w.body, { member: m.external, key }));
        }),
      );
      const micros = (s: string) => BigInt(s.replace('.', ''));
      let spent = 0n;
      for (const [i, w] of writes.entries()) {
        const first = oneResult(bursts[i]!);
        assert.ok(first.status === 201 || first.status === 200, `${w.path}: ${JSON.stringify(first.body)}`);
        const rows = await db().selectFrom(w.table).select('id').where('member_id', '=', m.id).execute();
        assert.deepEqual(
          rows.map((r) => r.id),
          [body(first).id],
          `${w.path}: one row, the one answered`,
        );
        // What the one execution took from available, as its answer states it.
        const a = body(first);
        spent +=
          micros(a.customer_total ?? a.from_amount ?? a.source_amount ?? a.amount) +
          (a.customer_total || a.from_amount ? 0n : micros(a.fee ?? '0.000000'));
      }
      assert.equal(micros(before.available) - micros((await balance(m.external, 'USDT')).available), spent);

      // Deposits (written in groups, docs/group-commit.md): one key sent at once credits once; one
      // transaction hash reported at once under several keys credits once too.
      const deposit = (tx_hash: string, key?: string) =>
        post('/v1/deposits', { member_id: m.external, asset: 'USDT', amount: '7', tx_hash }, { key });
      const depositKey = randomUUID();
      const sameKey = await burst(6, () => deposit('0xsame-key', depositKey));
      assert.equal(oneResult(sameKey).status, 201);
      const sameHash = await burst(6, () => deposit('0xsame-hash'));
      winners(sameHash, 201, 1, ['duplicate_resource']);
      const credited = await db()
        .selectFrom('deposits')
        .select('tx_hash')
        .where('member_id', '=', m.id)
        .where('tx_hash', 'in', ['0xsame-key', '0xsame-hash'])
        .execute();
      assert.deepEqual(credited.map((d) => d.tx_hash).sort(), ['0xsame-hash', '0xsame-key']);
      assert.equal(
        micros(before.available) - micros((await balance(m.external, 'USDT')).available),
        spent - 14_000000n,
      );
      await drain();
    },
  );

  it(
    'card: clearings and reversals of one authorisation at once: it is cleared or reversed once, its hold ' +
      'moved once',
    async () => {
      const m = await member({ USDT: '300' });
      const cardId = await approvedCard(client, m.external);
      await post(`/v1/cards/${cardId}/topups`, { amount: '50', source_asset: 'USDT' }, { member: m.external });
      await drain();
      const account = (bucket: 'card' | 'card_held') =>
        accountBalance(db(), 'sandbox', { owner: 'member', memberId: m.id, bucket, cardId }, 'USD');
      const loaded = await account('card');
      const auth = body(
        await post(`/v1/sandbox/cards/${cardId}/authorizations`, {
          amount: '30',
          merchant_name: 'SHOP',
          mcc: '5411',
        }),
      );
      assert.equal(auth.approved, true);
      const calls = ['clearings', 'reversals', 'clearings', 'reversals', 'reversals', 'clearings'];
      const rs = await Promise.all(
        calls.map((c) => post(`/v1/sandbox/cards/${cardId}/${c}`, { transaction_id: auth.transaction_id })),
      );
      const row = await stateOf('card_transactions', auth.transaction_id);
      assert.ok(row.status === 'cleared' || row.status === 'reversed', row.status);
      assert.equal(row.status_version, 2, 'moved once');
      const won = row.status === 'cleared' ? 'clearings' : 'reversals';
      rs.forEach((r, i) => {
        if (calls[i] === won && r.status === 200) return;
        assert.deepEqual([r.status, body(r).code], [400, 'state_invalid'], `${calls[i]}: ${JSON.stringify(r.body)}`);
      });
      assert.equal(
        count(rs, (r) => r.status === 200),
        1,
        JSON.stringify(statuses(rs)),
      );
      const follows = await db()
        .selectFrom('card_transactions')
        .select('type')
        .where('authorization_id', '=', auth.transaction_id)
        .execute();
      assert.deepEqual(
        follows.map((f) => f.type),
        [won === 'clearings' ? 'clearing' : 'reversal'],
      );
      assert.equal(await account('card_held'), 0n);
      assert.equal(await account('card'), won === 'clearings' ? loaded - 3000n : loaded);
    },
  );
});
