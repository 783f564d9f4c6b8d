/**
 * Issue 35, point 1: every card control, every money write and the sandbox helpers sent at once
 * on ONE member and ONE card, through the SDK and the real HTTP server, on PostgreSQL. Before the
 * lock order (docs/locking.md) and the bounded retry of a deadlock, a mix of card controls alone
 * answered 500 `api_error` to valid calls (`deadlock detected` locking a `cards` or `members`
 * row). Here no answer may be a 5xx, and the ledger verifies afterwards. The embedded database
 * runs one transaction at a time, so nothing contends there: the hammer needs PostgreSQL. The
 * bounded retry itself is shown on both databases with a trigger that fails a write's first
 * attempts as PostgreSQL ends a deadlock's victim (SQLSTATE 40P01).
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { MerchantWalletClient, RawResult } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { describeOnPostgres, drainWork } from './support/concurrency.js';
import { payNow } from './support/emv.js';
import { conflictAttemptsMax, conflictDelayMs, withConflictRetry } from '../src/platform/writes/conflict-retry.js';
import { approvedCard, cardProducts, postMember, sepaPayee, TRON } from './support/fixtures.js';

const billing = { address: '2 Market St', city: 'San Francisco', state: 'CA', country: 'US', postal_code: '94105' };

/** One request; `member: false` for the merchant's own calls (no `x-on-behalf-of`). Every call has a key of its own. */
interface Call {
  name: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  member?: boolean;
}

describeOnPostgres('one member and one card hammered by every write at once on PostgreSQL', 100, (service) => {
  let client: MerchantWalletClient;
  let external: string;
  const body = (r: RawResult) => r.body as any;
  const send = (c: Call): Promise<RawResult> =>
    client.requestRaw({
      method: c.method,
      path: c.path,
      body: c.body,
      onBehalfOf: c.member === false ? undefined : external,
      idempotencyKey: randomUUID(),
    });
  /** A call the setup needs to succeed. */
  const must = async (c: Call) => {
    const r = await send(c);
    assert.ok(r.status < 300, `${c.name}: ${r.status} ${r.rawBody}`);
    return body(r);
  };

  /** A member's active virtual card. */
  const virtualCard = () => approvedCard(client, external);
  /** A call of the merchant's own to the sandbox (no `x-on-behalf-of`). */
  const sandboxCall = (name: string, path: string, body?: unknown): Call => ({
    name,
    method: 'POST',
    path,
    body,
    member: false,
  });
  const withdrawal = (amount: string): Call => ({
    name: 'withdrawal',
    method: 'POST',
    path: '/v1/withdrawals',
    body: { asset: 'USDT', network: 'TRON', address: TRON, amount },
  });
  const quote: Call = {
    name: 'quote',
    method: 'POST',
    path: '/v1/exchange/quotes',
    body: { from_asset: 'USDT', to_asset: 'EUR', from_amount: '10', lock: true },
  };
  const topUp = (name: string, on: string, amount: string): Call => ({
    name,
    method: 'POST',
    path: `/v1/cards/${on}/topups`,
    body: { amount, source_asset: 'USDT' },
  });
  const drain = () => drainWork(service());

  it('no 5xx, and the ledger verifies', async () => {
    ({ client } = await newMerchantClient(service()));
    external = `hm-${randomUUID().slice(0, 8)}`;
    const memberId = (await client.members.create({ external_member_id: external })).id;
    const kyc = await must({ name: 'kyc session', method: 'POST', path: '/v1/kyc/sessions' });
    const kycReview = sandboxCall('kyc review', `/v1/sandbox/kyc/${external}/review`, {
      decision: 'approved',
      level: 2,
    });
    await must(sandboxCall('kyc complete', `/v1/sandbox/hosted-screens/${kyc.id}/complete`, { outcome: 'submitted' }));
    await must(kycReview);
    for (const [asset, amount] of [
      ['USDT', '100000'],
      ['SGD', '5000'],
      ['EUR', '5000'],
    ] as const) {
      await client.deposits.create({ member_id: external, asset, amount, tx_hash: `t-${randomUUID()}` });
    }
    const card = await virtualCard();
    await must(topUp('top-up', card, '500'));
    await drain();
    const payee = await client.remittance.createPayee(sepaPayee(), { onBehalfOf: external });
    const flexible = (await client.earn.products()).find((p) => p.type === 'flexible')!;
    const earn = (name: string, amount: string): Call => ({
      name,
      method: 'POST',
      path: '/v1/earn/orders',
      body: { product_id: flexible.id, amount },
    });
    const remit: Call = {
      name: 'remittance',
      method: 'POST',
      path: '/v1/remittances',
      body: { payee_id: payee.id, source_asset: 'USDT', source_amount: '20' },
    };

    const failures: string[] = [];
    let answered = 0;
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      // The CVV unblock's hour (5 calls a member) starts empty each round, so that its calls take their locks.
      await service().ctx.db.deleteFrom('card_cvv_unblock_calls').where('member_id', '=', memberId).execute();
      // What the burst's follow-ups act on, made before it.
      const many = async (n: number, c: Call) => {
        const out = [];
        for (let i = 0; i < n; i++) out.push(await must(c));
        return out;
      };
      const withdrawals = (await many(4, withdrawal('5'))).map((w) => w.id);
      const quotes = (await many(2, quote)).map((q) => q.quote_id);
      const position = (await must(earn('earn', '50'))).position_id;
      const remittance = (await must(remit)).id;
      const authorise = (on: string, amount = '3') =>
        sandboxCall('authorisation', `/v1/sandbox/cards/${on}/authorizations`, {
          amount,
          merchant_name: 'SHOP',
          mcc: '5411',
        });
      const auths = (await many(4, authorise(card))).map((a) => a.transaction_id);
      await must(sandboxCall('clearing', `/v1/sandbox/cards/${card}/clearings`, { transaction_id: auths[3] }));
      // A second card of the member, closed during the burst while money moves on it; a third,
      // replaced (reported stolen); and an application the issuer decides during the burst.
      const doomed = await virtualCard();
      const stolen = await virtualCard();
      const { virtual } = await cardProducts(client);
      const pending = (
        await client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: external })
      ).id;
      await must(topUp('top-up', doomed, '30'));
      const profileUpdate = (await must({ name: 'profile session', method: 'POST', path: '/v1/kyc/profile-sessions' }))
        .id;
      await drain();

      const controls = (on: string): Call[] => [
        { name: 'cvv unblock', method: 'POST', path: `/v1/cards/${on}/cvv/unblock` },
        { name: 'secure session', method: 'POST', path: `/v1/cards/${on}/secure-session` },
        {
          name: 'merchant rules put',
          method: 'PUT',
          path: `/v1/cards/${on}/merchant-rules`,
          body: { rule_type: 'black', merchant_names: ['CASINO'] },
        },
        { name: 'merchant rules delete', method: 'DELETE', path: `/v1/cards/${on}/merchant-rules` },
        { name: 'limits', method: 'PATCH', path: `/v1/cards/${on}/limits`, body: { daily: '5000' } },
        { name: 'billing address', method: 'PATCH', path: `/v1/cards/${on}/billing-address`, body: billing },
      ];
      const money: Call[] = [
        ...Array.from({ length: 3 }, () =>
          sandboxCall('deposit', '/v1/deposits', {
            member_id: external,
            asset: 'USDT',
            amount: '10',
            tx_hash: `t-${randomUUID()}`,
          }),
        ),
        withdrawal('5'),
        ...withdrawals.map((id, i): Call => ({
          name: `withdrawal ${i % 2 ? 'fail' : 'confirm'}`,
          method: 'POST',
          path: `/v1/withdrawals/${id}/${i % 2 ? 'fail' : 'confirm'}`,
          member: false,
        })),
        quote,
        ...quotes.map((quote_id): Call => ({
          name: 'exchange order',
          method: 'POST',
          path: '/v1/exchange/orders',
          body: { quote_id },
        })),
        remit,
        earn('earn subscribe', '20'),
        { name: 'earn redeem', method: 'POST', path: `/v1/earn/positions/${position}/redeem` },
        topUp('card top-up', card, '20'),
        {
          name: 'card top-up quote',
          method: 'POST',
          path: `/v1/cards/${card}/topup-quotes`,
          body: { amount: '20', source_asset: 'USDT' },
        },
        topUp('doomed top-up', doomed, '20'),
        {
          name: 'qr payment',
          method: 'POST',
          path: '/v1/qrpay/payments',
          body: { qr_code: payNow({ amount: '3' }), asset: 'SGD' },
        },
        { name: 'close', method: 'POST', path: `/v1/cards/${doomed}/close` },
        { name: 'replacement', method: 'POST', path: `/v1/cards/${stolen}/replacements`, body: { reason: 'stolen' } },
        topUp('stolen top-up', stolen, '20'),
        {
          name: 'application',
          method: 'POST',
          path: '/v1/cards/applications',
          body: { product_id: virtual.id, source_asset: 'USDT' },
        },
      ];
      const sandbox: Call[] = [
        authorise(card, '2'),
        authorise(doomed, '2'),
        authorise(stolen, '2'),
        sandboxCall('application decided', `/v1/sandbox/cards/applications/${pending}/advance`, { to: 'approved' }),
        sandboxCall('clearing', `/v1/sandbox/cards/${card}/clearings`, { transaction_id: auths[0] }),
        sandboxCall('reversal', `/v1/sandbox/cards/${card}/reversals`, { transaction_id: auths[1] }),
        sandboxCall('partial clearing', `/v1/sandbox/cards/${card}/clearings`, {
          transaction_id: auths[2],
          amount: '1',
        }),
        sandboxCall('refund', `/v1/sandbox/cards/${card}/refunds`, { transaction_id: auths[3], amount: '1' }),
        sandboxCall('remittance return', `/v1/sandbox/remittances/${remittance}/return`),
        { name: 'profile session', method: 'POST', path: '/v1/kyc/profile-sessions' },
        // A profile update pauses the member's exchange and remittances until its review: the last round only.
        ...(round === rounds - 1
          ? [
              sandboxCall('profile update', `/v1/sandbox/hosted-screens/${profileUpdate}/complete`, {
                outcome: 'submitted',
              }),
              kycReview,
            ]
          : []),
        sandboxCall('sessions revoke', `/v1/members/${external}/sessions/revoke`),
        sandboxCall('clock advance', '/v1/sandbox/clock/advance', { seconds: 60 }),
      ];
      const calls = [
        ...controls(card),
        ...controls(card),
        ...controls(card),
        ...controls(doomed),
        ...controls(stolen),
        ...money,
        ...sandbox,
      ];
      // The background jobs (top-up dispatch, limits push, replacement, close, remittance) run meanwhile.
      const [rs] = await Promise.all([Promise.all(calls.map(send)), drain()]);
      answered += rs.length;
      for (const [i, r] of rs.entries())
        if (r.status >= 500) failures.push(`round ${round} ${calls[i]!.name}: ${r.status} ${r.rawBody}`);
      await drain();
    }
    const verify = await admin(service(), 'GET', '/admin/v1/ledger/verify');
    assert.equal(verify.status, 200, JSON.stringify(verify.body));
    assert.equal(failures.length, 0, `${failures.length} of ${answered} answers were 5xx:\n${failures.join('\n')}`);
    assert.deepEqual(verify.body.problems, [], 'the ledger verifies');
    assert.equal(verify.body.ok, true);
  });
});

describe('a transaction ended by a deadlock is run again whole, a bounded number of times', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({}, (s) => ({ service, client } = s));
  const db = () => service.ctx.db;

  // `deadlock-<n>-…` in a member's external id or a deposit's tx_hash: the first n attempts of
  // its insert fail with 40P01. Counted by a sequence, which a rollback does not undo.
  before(async () => {
    await sql`CREATE SEQUENCE test_deadlock_attempts`.execute(db());
    await sql`CREATE FUNCTION test_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE tag text := coalesce(to_jsonb(NEW) ->> 'external_member_id', to_jsonb(NEW) ->> 'tx_hash');
      BEGIN
        IF tag LIKE 'deadlock-%' AND nextval('test_deadlock_attempts') <= split_part(tag, '-', 2)::int THEN
          RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = 'deadlock_detected';
        END IF;
        RETURN NEW;
      END $$`.execute(db());
    await sql`CREATE TRIGGER test_deadlock BEFORE INSERT ON members
      FOR EACH ROW EXECUTE FUNCTION test_deadlock()`.execute(db());
    await sql`CREATE TRIGGER test_deadlock BEFORE INSERT ON deposits
      FOR EACH ROW EXECUTE FUNCTION test_deadlock()`.execute(db());
  });
  const attemptsFrom = async (fn: () => Promise<RawResult>) => {
    await sql`SELECT setval('test_deadlock_attempts', 1, false)`.execute(db());
    const r = await fn();
    const { rows } = await sql<{
      n: string;
    }>`SELECT last_value - 1 + (CASE WHEN is_called THEN 1 ELSE 0 END) AS n FROM test_deadlock_attempts`.execute(db());
    return { r, attempts: Number(rows[0]!.n) };
  };
  const members = async (external: string) =>
    Number(
      (
        await db()
          .selectFrom('members')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('external_member_id', '=', external)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('backs off 20 then 40 ms, ±50 %, and gives up after the bound', async () => {
    assert.equal(conflictAttemptsMax, 3);
    assert.deepEqual(
      [conflictDelayMs(1, () => 0), conflictDelayMs(1, () => 1), conflictDelayMs(2, () => 0.5)],
      [10, 30, 40],
    );
    let calls = 0;
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const slept: number[] = [];
    await assert.rejects(
      withConflictRetry(
        async () => {
          calls++;
          throw deadlock;
        },
        {
          sleep: async (ms) => {
            slept.push(ms);
          },
        },
      ),
      deadlock,
    );
    assert.equal(calls, 3);
    assert.equal(slept.length, 2);
    calls = 0;
    await assert.rejects(
      withConflictRetry(async () => {
        calls++;
        throw Object.assign(new Error('unique'), { code: '23505' });
      }),
      /unique/,
    );
    assert.equal(calls, 1, 'any other error is not retried');
  });

  it(
    'a keyed write: its transaction, key record included, runs again; one effect, one record, the replay ' +
      'identical',
    async () => {
      const external = `deadlock-2-${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      const { r, attempts } = await attemptsFrom(() => postMember(client, external, key));
      assert.equal(r.status, 201, r.rawBody);
      assert.equal(attempts, 3, 'two attempts ended by the deadlock, the third committed');
      assert.equal(await members(external), 1);
      const replay = await postMember(client, external, key);
      assert.deepEqual(
        [replay.status, replay.headers['x-idempotent-replay'], replay.rawBody],
        [201, 'true', r.rawBody],
      );
    },
  );

  it('past the bound: 500 with nothing written or stored, and the same key then runs', async () => {
    const external = `deadlock-3-${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const { r, attempts } = await attemptsFrom(() => postMember(client, external, key));
    assert.deepEqual([r.status, r.body.code], [500, 'api_error']);
    assert.equal(attempts, conflictAttemptsMax, 'no attempt beyond the bound');
    assert.equal(await members(external), 0);
    await sql`SELECT setval('test_deadlock_attempts', 100)`.execute(db());
    const again = await postMember(client, external, key);
    assert.equal(again.status, 201, again.rawBody);
    assert.equal(again.headers['x-idempotent-replay'], undefined, "the 500 was not the key's result");
  });

  it("a grouped write (a deposit's batch statement) runs again; one deposit", async () => {
    const m = await client.members.create({ external_member_id: `dl-${randomUUID().slice(0, 8)}` });
    const txHash = `deadlock-1-${randomUUID()}`;
    const { r, attempts } = await attemptsFrom(() =>
      client.requestRaw({
        method: 'POST',
        path: '/v1/deposits',
        body: { member_id: m.id, asset: 'USDT', amount: '5', tx_hash: txHash },
        idempotencyKey: randomUUID(),
      }),
    );
    assert.equal(r.status, 201, r.rawBody);
    assert.equal(attempts, 2);
    const rows = await db().selectFrom('deposits').select('id').where('tx_hash', '=', txHash).execute();
    assert.deepEqual(
      rows.map((d) => d.id),
      [r.body.id],
    );
  });
});
