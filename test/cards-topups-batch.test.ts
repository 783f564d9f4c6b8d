/**
 * Card top-ups sent at once through HTTP via the SDK, written together by their batch effect
 * (createTopUps, src/modules/cards/topups/create.ts): several members' cards of two merchants, a
 * member's two top-ups that cannot both be paid (whichever is written first is, as if they came
 * one by one), refusals among them (a closed card, an amount out of range, another member's
 * card); each answer as if alone, the balances, the ledger and the rows. On PostgreSQL, a burst of
 * top-ups of one card with its close and a second card's close does not deadlock (the cards locked
 * before the merchants' write locks, as every card write locks them).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MerchantWalletError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { newMerchantClient, useTestService, instantUpstreams, expectLedgerClean } from './support/service.js';
import { entryKinds, kycMember, approvedCard, setCardStatus } from './support/fixtures.js';
import { describeOnPostgres, drainWork } from './support/concurrency.js';

type Outcome = { id?: string; status?: string; code?: string };

const topUp = (client: MerchantWalletClient, m: string, card: string, amount: string): Promise<Outcome> =>
  client.cards.topUp(card, { amount, source_asset: 'USDT' }, { onBehalfOf: m }).then(
    (t) => ({ id: t.id, status: t.status }),
    (err) => ({ code: (err as MerchantWalletError).code ?? String(err) }),
  );

describe('card top-ups sent at once (batches of top-ups)', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({ config: instantUpstreams }, (s) => ({ service, client } = s));
  afterEach(() => expectLedgerClean(service));

  const balance = async (c: MerchantWalletClient, m: string) => {
    const b = (await c.balances.list({ onBehalfOf: m })).find((x) => x.asset === 'USDT') as any;
    return [b.available, b.frozen];
  };
  const rowsOf = async (cardId: string) =>
    (await service.ctx.db.selectFrom('card_topups').select(['id', 'status']).where('card_id', '=', cardId).execute())
      .map((r) => r.id)
      .sort();
  /** A member of `c`'s merchant with an active card: 95 USDT available once the opening fee is paid. */
  async function holder(c: MerchantWalletClient) {
    const m = (await kycMember(service, c, { prefix: 'tb', deposits: { USDT: '100' } })).external;
    return { m, card: await approvedCard(c, m) };
  }

  it('answers each as if alone, freezes only what was accepted, in a handful of batches', async () => {
    const { client: other } = await newMerchantClient(service);
    const [a, b, c, closed, small] = [
      await holder(client),
      await holder(client),
      await holder(other),
      await holder(client),
      await holder(other),
    ];
    await setCardStatus(service, closed.card, 'closed');
    const before = { ...service.ctx.writeGroup.stats };
    // a's two top-ups cost 60.60 each of its 95: whichever is written first is paid, the other refused.
    const [a1, a2, b1, c1, closed1, small1, stranger] = await Promise.all([
      topUp(client, a.m, a.card, '60'),
      topUp(client, a.m, a.card, '60'),
      topUp(client, b.m, b.card, '20'),
      topUp(other, c.m, c.card, '30'),
      topUp(client, closed.m, closed.card, '20'),
      topUp(other, small.m, small.card, '9.99'),
      topUp(client, b.m, a.card, '20'),
    ]);
    const stats = service.ctx.writeGroup.stats;
    assert.ok(stats.together - before.together >= 2, 'written by the batch effect');
    assert.ok(
      stats.items - before.items > stats.batches - before.batches,
      `some batches held several top-ups: ${JSON.stringify([before, stats])}`,
    );

    const paid = [a1, a2].filter((x) => x.status === 'pending');
    assert.equal(paid.length, 1, JSON.stringify([a1, a2]));
    assert.equal([a1, a2].find((x) => !x.status)?.code, 'insufficient_balance');
    assert.equal(b1.status, 'pending', JSON.stringify(b1));
    assert.equal(c1.status, 'pending', JSON.stringify(c1));
    assert.equal(closed1.code, 'state_invalid');
    assert.equal(small1.code, 'amount_out_of_range');
    assert.equal(stranger.code, 'not_found', "another member's card");

    // Amount + fee frozen for each accepted top-up only; a refused one moved nothing and left no row.
    assert.deepEqual(await balance(client, a.m), ['34.400000', '60.600000']);
    assert.deepEqual(await balance(client, b.m), ['74.800000', '20.200000']);
    assert.deepEqual(await balance(other, c.m), ['64.700000', '30.300000']);
    assert.deepEqual(await balance(client, closed.m), ['95.000000', '0.000000']);
    assert.deepEqual(await balance(other, small.m), ['95.000000', '0.000000']);
    assert.deepEqual(await rowsOf(a.card), [paid[0]!.id]);
    assert.deepEqual(await rowsOf(b.card), [b1.id]);
    assert.deepEqual(await rowsOf(c.card), [c1.id]);
    assert.deepEqual(await rowsOf(closed.card), []);
    assert.deepEqual(await rowsOf(small.card), []);
    for (const t of [paid[0]!, b1, c1]) assert.deepEqual(await entryKinds(service, t.id!), ['card.topup_freeze']);
    await expectLedgerClean(service);

    // Each is dispatched by its own job: credited, the freeze settled.
    await drainWork(service);
    for (const [t, cl, card] of [
      [paid[0]!, client, a.card],
      [b1, client, b.card],
      [c1, other, c.card],
    ] as const) {
      assert.equal((await cl.cards.getTopUpById(t.id!)).status, 'credited', card);
      assert.deepEqual(await entryKinds(service, t.id!), [
        'card.topup_credit',
        'card.topup_freeze',
        'card.topup_settle',
      ]);
    }
    assert.deepEqual(await balance(client, a.m), ['34.400000', '0.000000']);
    assert.deepEqual(await balance(other, c.m), ['64.700000', '0.000000']);
  });
});

describeOnPostgres('card top-ups sent at once with the close of their card (PostgreSQL)', 1, (service) => {
  async function holders(client: MerchantWalletClient, n: number) {
    const list = [];
    for (let i = 0; i < n; i++) {
      const m = (await kycMember(service(), client, { prefix: 'tc', deposits: { USDT: '300' } })).external;
      list.push({ m, card: await approvedCard(client, m) });
    }
    return list;
  }
  const close = (client: MerchantWalletClient, m: string, card: string): Promise<Outcome> =>
    client.cards.close(card, { onBehalfOf: m }).then(
      (c) => ({ status: c.status }),
      (err) => ({ code: (err as MerchantWalletError).code ?? String(err) }),
    );

  it("a batch waiting for a card holds no merchant's write lock: the close holding the card takes it", async () => {
    const { client } = await newMerchantClient(service());
    const [x, y, z] = await holders(client, 3);
    const card = await service()
      .ctx.db.selectFrom('cards')
      .select(['merchant_id', 'environment'])
      .where('id', '=', x!.card)
      .executeTakeFirstOrThrow();
    const merchantLock = `merchant-writes|${card.merchant_id}|${card.environment}`;
    const { default: pg } = await import('pg');
    const holder = new pg.Client({ connectionString: service().ctx.config.databaseUrl });
    const prober = new pg.Client({ connectionString: service().ctx.config.databaseUrl });
    await Promise.all([holder.connect(), prober.connect()]);
    try {
      // A close of x's card holds it (its first lock, prepareClose) ...
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM cards WHERE id = $1 FOR NO KEY UPDATE', [x!.card]);
      const sent = Promise.all([
        topUp(client, x!.m, x!.card, '20'),
        topUp(client, y!.m, y!.card, '20'),
        topUp(client, z!.m, z!.card, '20'),
      ]);
      const waiting = async () =>
        Number(
          (
            await prober.query(
              'SELECT count(*) AS n FROM pg_stat_activity ' +
                "WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0].n,
        );
      for (let i = 0; i < 100 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok((await waiting()) > 0, "the top-up of x's card waits for the card");
      // ... while the batch waits for the card, nobody holds the merchant's write lock ...
      await prober.query('BEGIN');
      const free = await prober.query('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS got', [
        merchantLock,
      ]);
      await prober.query('ROLLBACK');
      assert.equal(free.rows[0].got, true, "a batch waiting for the card held the merchant's lock: the close's cycle");
      // ... so the close takes it at its posting (at once: a wait would end in 55P03 here) and commits.
      await holder.query("SET LOCAL lock_timeout = '2s'");
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [merchantLock]);
      await holder.query('COMMIT');
      const outcomes = await sent;
      assert.deepEqual(
        outcomes.map((o) => o.status ?? o.code),
        ['pending', 'pending', 'pending'],
      );
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await Promise.all([holder.end(), prober.end()]);
    }
    await drainWork(service());
    await expectLedgerClean(service());
  });

  it('top-ups of several cards and closes of the same cards at once: none left pending on a closing card', async () => {
    const { client } = await newMerchantClient(service());
    const list = await holders(client, 4);
    // A pending top-up on each card first: each close fails it, posting (the merchant's lock) with its card held.
    for (const h of list) assert.equal((await topUp(client, h.m, h.card, '20')).status, 'pending');
    const before = { ...service().ctx.writeGroup.stats };
    const calls = list.flatMap((h, i) => {
      const next = list[(i + 1) % list.length]!;
      return [
        () => topUp(client, h.m, h.card, '20'),
        () => topUp(client, next.m, next.card, '10'),
        () => (i % 2 === 0 ? close(client, h.m, h.card) : topUp(client, h.m, h.card, '20')),
        () => topUp(client, h.m, h.card, '20'),
      ];
    });
    const outcomes = await Promise.all(calls.map((call) => call()));
    for (const o of outcomes) assert.ok(o.status !== undefined || o.code === 'state_invalid', JSON.stringify(outcomes));
    const stats = service().ctx.writeGroup.stats;
    assert.ok(stats.items - before.items > stats.batches - before.batches, 'some batches held several top-ups');
    for (const [i, h] of list.entries()) {
      const rows = await service()
        .ctx.db.selectFrom('card_topups')
        .select(['status', 'failure_reason'])
        .where('card_id', '=', h.card)
        .execute();
      if (i % 2 === 0)
        assert.deepEqual(
          rows.filter((r) => r.status !== 'failed' || r.failure_reason !== 'card_closing'),
          [],
          `card ${i} is closing: every top-up accepted before the close failed by it`,
        );
      else assert.ok(rows.every((r) => r.status === 'pending'));
    }
    await drainWork(service());
    await expectLedgerClean(service());
  });
});
