/**
 * Card top-ups through HTTP via the SDK: the quote (the reference's shape, nothing stored, the
 * payment priority, range refusals as 4xx), the top-up (201 frozen, credited only when the issuer
 * confirms, every sandbox behaviour, reconciliation of unknown outcomes, idempotency, parallel
 * top-ups against one balance), its events, and the ledger verified after each money step.
 */
import { afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MerchantWalletError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService, instantUpstreams, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import { expectOwnersCardOnly } from './support/card-lifecycle.js';
import {
  eventsAbout,
  kycMember,
  approvedCard,
  withUpstream,
  setCardStatus,
  patchCardProducts,
  rowById,
} from './support/fixtures.js';

describe('card top-ups', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({ config: instantUpstreams }, (s) => ({ service, client } = s));

  const ledgerClean = () => expectLedgerClean(service);
  // Every test ends on a ledger that verifies.
  afterEach(ledgerClean);
  const drain = () => service.workers.jobs.drain();
  const reconcile = () => service.workers.tick();
  const balance = async (m: string, asset: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === asset) as any;
  const eventsOf = async (id: string) =>
    (await eventsAbout(service, id, ['type', 'status_version'])).map((e) => `${e.type}@${e.status_version}`);

  async function member(deposits: Record<string, string> = { USDT: '100' }) {
    return (await kycMember(service, client, { prefix: 'ct', deposits })).external;
  }
  /** A member with an active virtual card (opening fee 5 USDT charged: 95 USDT left of 100). */
  async function virtualCard(deposits?: Record<string, string>, feeAsset = 'USDT') {
    const m = await member(deposits);
    return { m, id: await approvedCard(client, m, { sourceAsset: feeAsset }) };
  }
  const setStatus = (id: string, status: string) => setCardStatus(service, id, status);
  const setAsset = async (code: string, enabled: boolean) =>
    assert.equal((await admin(service, 'PATCH', `/admin/v1/assets/${code}`, { enabled })).status, 200);
  const setProducts = (patch: Record<string, unknown>) => patchCardProducts(service, patch);
  const topupRows = async (cardId: string) =>
    Number(
      (
        await service.ctx.db
          .selectFrom('card_topups')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('card_id', '=', cardId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  describe('POST /v1/cards/{id}/topup-quotes', () => {
    before(async () => {
      ({ client } = await newMerchantClient(service));
    });
    // One card for the first two tests (made when the first asks, so each also runs alone): the
    // first stores nothing (as it asserts: no top-up row, the balance unchanged), so the second
    // still starts from a card with nothing loaded. Its member is the last test's other member.
    // The third needs a member holding USDC too; the last ends its card (status set): their own.
    let sharedCard: ReturnType<typeof virtualCard> | undefined;
    const shared = () => (sharedCard ??= virtualCard());

    it("answers the reference's quote in smallest-unit integer strings and stores nothing", async () => {
      const { m, id } = await shared();
      const before = await balance(m, 'USDT');
      const q = await client.cards.quoteTopUp(id, { amount: '100', source_asset: 'USDT' }, { onBehalfOf: m });
      assert.deepEqual(
        { ...q, note: typeof q.note },
        {
          customer_total: '101000000',
          arrival_amount: '10000',
          fee: '1000000',
          source_asset: 'USDT',
          ledger_scale: 6,
          card_currency: 'USD',
          card_scale: 2,
          note: 'string',
        },
      );
      assert.match(q.note, /1:1/);
      // The fee rounds up; an amount with more places than the card currency arrives rounded down at 1:1.
      const odd = await client.cards.quoteTopUp(id.slice(4), { amount: '10.005001' }, { onBehalfOf: m });
      assert.equal(odd.fee, '100051');
      assert.equal(odd.customer_total, '10105052');
      assert.equal(odd.arrival_amount, '1000');
      assert.deepEqual(await balance(m, 'USDT'), before);
      assert.equal(await topupRows(id), 0);
    });

    it(
      "follows the operator's top-up pricing: fee in basis points plus a fixed part; the markup never shows in " +
        'the quote',
      async () => {
        const { m, id } = await shared();
        const products = (await admin(service, 'GET', '/admin/v1/cards/products?environment=sandbox')).body.data;
        const set = async (body: Record<string, unknown>) => {
          for (const p of products)
            assert.equal(
              (await admin(service, 'PATCH', `/admin/v1/cards/products/${p.id}/topup-pricing`, body)).status,
              200,
            );
        };
        await set({ topup_fee_bps: 250, topup_fee_fixed: '0.50', topup_fx_markup_bps: 300 });
        try {
          const q = await client.cards.quoteTopUp(id, { amount: '20' }, { onBehalfOf: m });
          assert.deepEqual([q.fee, q.customer_total, q.arrival_amount], ['1000000', '21000000', '2000']);
          const t = await client.cards.topUp(id, { amount: '20' }, { onBehalfOf: m });
          assert.deepEqual([t.fee, t.arrival_amount], ['1.000000', '19.40']);
          await drain();
          assert.equal((await balance(m, 'USD')).card, '19.40');
          const bad = await admin(service, 'PATCH', `/admin/v1/cards/products/${products[0].id}/topup-pricing`, {
            topup_fee_fixed: '0.001',
          });
          assert.equal(bad.body.code, 'invalid_request');
        } finally {
          await set({ topup_fee_bps: 100, topup_fee_fixed: '0', topup_fx_markup_bps: 50 });
        }
      },
    );

    it("replaces a preference that is not usable by the member's payment priority", async () => {
      const { m, id } = await virtualCard({ USDT: '100', USDC: '300' });
      assert.equal(
        (await client.cards.quoteTopUp(id, { amount: '50', source_asset: 'usdc' }, { onBehalfOf: m })).source_asset,
        'USDC',
      );
      // Not in the product's list: the product's order, the first whose balance covers the total (USDT: 95 left).
      assert.equal(
        (await client.cards.quoteTopUp(id, { amount: '50', source_asset: 'BTC' }, { onBehalfOf: m })).source_asset,
        'USDT',
      );
      // USDT does not cover 200 + fee: USDC does.
      assert.equal((await client.cards.quoteTopUp(id, { amount: '200' }, { onBehalfOf: m })).source_asset, 'USDC');
      // Nothing covers it: the first listed.
      assert.equal(
        (await client.cards.quoteTopUp(id, { amount: '1000', source_asset: 'NOPE' }, { onBehalfOf: m })).source_asset,
        'USDT',
      );
      // Delisted: the preference is replaced.
      await setAsset('USDT', false);
      try {
        assert.equal(
          (await client.cards.quoteTopUp(id, { amount: '50', source_asset: 'USDT' }, { onBehalfOf: m })).source_asset,
          'USDC',
        );
        await setAsset('USDC', false);
        await expectCode(client.cards.quoteTopUp(id, { amount: '50' }, { onBehalfOf: m }), 'product_not_available');
      } finally {
        await setAsset('USDT', true);
        await setAsset('USDC', true);
      }
    });

    it('refuses amounts out of range (4xx), malformed amounts, unusable cards and products', async () => {
      const { m, id } = await virtualCard();
      for (const amount of ['9.99', '10000.01', '0', '0.000001']) {
        await assert.rejects(client.cards.quoteTopUp(id, { amount }, { onBehalfOf: m }), (err: unknown) => {
          assert.ok(err instanceof MerchantWalletError);
          assert.equal(err.code, 'amount_out_of_range', amount);
          assert.equal(err.status, 400);
          return true;
        });
      }
      assert.equal((await client.cards.quoteTopUp(id, { amount: '10' }, { onBehalfOf: m })).arrival_amount, '1000');
      assert.equal(
        (await client.cards.quoteTopUp(id, { amount: '10000' }, { onBehalfOf: m })).arrival_amount,
        '1000000',
      );
      for (const amount of ['abc', '1.0000001', '-5', '1e3'])
        await expectCode(client.cards.quoteTopUp(id, { amount }, { onBehalfOf: m }), 'invalid_request');
      const { m: other } = await shared();
      await expectOwnersCardOnly(
        (card, member) => client.cards.quoteTopUp(card, { amount: '20' }, { onBehalfOf: member }),
        id,
        m,
        other,
      );
      await setProducts({ enabled: false });
      try {
        await expectCode(client.cards.quoteTopUp(id, { amount: '20' }, { onBehalfOf: m }), 'product_not_available');
      } finally {
        await setProducts({ enabled: true });
      }
      for (const s of ['closing', 'closed', 'expired', 'replaced']) {
        await setStatus(id, s);
        await expectCode(client.cards.quoteTopUp(id, { amount: '20' }, { onBehalfOf: m }), 'state_invalid');
      }
    });
  });

  describe('POST /v1/cards/{id}/topups', () => {
    before(async () => {
      ({ client } = await newMerchantClient(service));
    });

    it('freezes amount + fee at 201, credits the card only when the issuer confirms, at the real rate', async () => {
      const { m, id } = await virtualCard();
      const t = await client.cards.topUp(id, { amount: '50', source_asset: 'USDT' }, { onBehalfOf: m });
      assert.equal(t.status, 'pending');
      assert.equal(t.status_version, 1);
      assert.deepEqual(
        [t.amount, t.fee, t.customer_total, t.card_currency],
        ['50.000000', '0.500000', '50.500000', 'USD'],
      );
      // USDT → USD: mid 1 less the product's 0.5 % markup (never disclosed by the quote).
      assert.equal(t.arrival_amount, '49.75');
      let usdt = await balance(m, 'USDT');
      assert.deepEqual([usdt.available, usdt.frozen], ['44.500000', '50.500000']);
      assert.equal((await balance(m, 'USD'))?.card ?? '0.00', '0.00');
      assert.deepEqual(await eventsOf(t.id), []);
      await ledgerClean();

      await drain();
      const done = await client.cards.getTopUp(id, t.id, { onBehalfOf: m });
      assert.equal(done.status, 'credited');
      assert.equal(done.status_version, 3);
      assert.ok(done.credited_at);
      usdt = await balance(m, 'USDT');
      assert.deepEqual([usdt.available, usdt.frozen], ['44.500000', '0.000000']);
      assert.equal((await balance(m, 'USD')).card, '49.75');
      assert.deepEqual(await eventsOf(t.id), ['card.topup.credited@3']);
      // The prefix is optional; the merchant reads it too; the list has it.
      assert.equal((await client.cards.getTopUp(id.slice(4), t.id.slice(4), { onBehalfOf: m })).id, t.id);
      assert.equal((await client.cards.getTopUp(id, t.id)).id, t.id);
      const list = [];
      for await (const x of client.cards.listTopUps(id, { onBehalfOf: m })) list.push(x.id);
      assert.deepEqual(list, [t.id]);
      const other = await member();
      await expectCode(client.cards.getTopUp(id, t.id, { onBehalfOf: other }), 'not_found', 404);
    });

    it(
      "GET /v1/cards/topups/{id}: by the id alone (a card.topup.* event's data.id), prefix optional; member, " +
        'merchant; another member or merchant: not_found',
      async () => {
        const { m, id } = await virtualCard();
        const t = await client.cards.topUp(id, { amount: '20' }, { onBehalfOf: m });
        await drain();
        const nested = await client.cards.getTopUp(id, t.id, { onBehalfOf: m });
        assert.equal(nested.status, 'credited');
        // The event carries only data.id (and the member's external id): enough to fetch it.
        const [event] = await eventsAbout(service, t.id, ['object', 'object_id']);
        assert.equal(event.object, 'card_topup');
        assert.deepEqual(await client.cards.getTopUpById(event.object_id, { onBehalfOf: m }), nested);
        assert.deepEqual(await client.cards.getTopUpById(t.id.slice(4), { onBehalfOf: m }), nested);
        assert.deepEqual(await client.cards.getTopUpById(t.id), nested);
        const other = await member();
        await expectCode(client.cards.getTopUpById(t.id, { onBehalfOf: other }), 'not_found', 404);
        await expectCode(client.cards.getTopUpById(`ctu_${randomUUID()}`), 'not_found', 404);
        const { client: stranger } = await newMerchantClient(service);
        await expectCode(stranger.cards.getTopUpById(t.id), 'not_found', 404);
      },
    );

    it('replays the same key without a second freeze; another body with the key is refused', async () => {
      const { m, id } = await virtualCard();
      const key = randomUUID();
      const a = await client.cards.topUp(id, { amount: '20' }, { onBehalfOf: m, idempotencyKey: key });
      const b = await client.cards.topUp(id, { amount: '20' }, { onBehalfOf: m, idempotencyKey: key });
      assert.equal(a.id, b.id);
      assert.equal(await topupRows(id), 1);
      await expectCode(
        client.cards.topUp(id, { amount: '21' }, { onBehalfOf: m, idempotencyKey: key }),
        'idempotency_key_reused',
        409,
      );
      assert.equal((await balance(m, 'USDT')).available, '74.800000');
      await drain();
    });

    it('refuses what the quote refuses, and an insufficient balance, moving nothing', async () => {
      const { m, id } = await virtualCard();
      await expectCode(client.cards.topUp(id, { amount: '9.99' }, { onBehalfOf: m }), 'amount_out_of_range');
      await expectCode(client.cards.topUp(id, { amount: '1.0000001' }, { onBehalfOf: m }), 'invalid_request');
      await expectCode(client.cards.topUp(id, { amount: '95' }, { onBehalfOf: m }), 'insufficient_balance');
      await setStatus(id, 'closed');
      await expectCode(client.cards.topUp(id, { amount: '20' }, { onBehalfOf: m }), 'state_invalid');
      assert.equal((await balance(m, 'USDT')).available, '95.000000');
      assert.equal(await topupRows(id), 0);
    });

    it('parallel top-ups against one available balance never overdraw it', async () => {
      const { m, id } = await virtualCard();
      // 95 USDT available; each top-up costs 30.30: three fit, the other five are refused.
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => client.cards.topUp(id, { amount: '30' }, { onBehalfOf: m })),
      );
      const ok = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(ok.length, 3);
      for (const r of refused) assert.equal((r.reason as MerchantWalletError).code, 'insufficient_balance');
      const usdt = await balance(m, 'USDT');
      assert.deepEqual([usdt.available, usdt.frozen], ['4.100000', '90.900000']);
      await drain();
      assert.equal((await balance(m, 'USD')).card, '89.55');
      assert.equal((await balance(m, 'USDT')).frozen, '0.000000');
    });
  });

  describe('sandbox behaviours of the card issuer', () => {
    before(async () => {
      ({ client } = await newMerchantClient(service));
    });
    /** A new card's top-up of 40 sent while the issuer answers `behavior`, its dispatch run; the issuer then back. */
    async function topUpMeeting(behavior: string) {
      const { m, id } = await virtualCard();
      const t = await withUpstream(client, 'card', behavior, async () => {
        const sent = await client.cards.topUp(id, { amount: '40' }, { onBehalfOf: m });
        await drain();
        return sent;
      });
      return { m, id, t };
    }

    it('reject: failed, amount + fee back to available, card.topup.failed', async () => {
      const { m, id, t } = await topUpMeeting('reject');
      const done = await client.cards.getTopUp(id, t.id, { onBehalfOf: m });
      assert.deepEqual([done.status, done.failure_reason], ['failed', 'upstream_rejected']);
      assert.deepEqual(await eventsOf(t.id), ['card.topup.failed@3']);
      const usdt = await balance(m, 'USDT');
      assert.deepEqual([usdt.available, usdt.frozen], ['95.000000', '0.000000']);
      assert.equal((await balance(m, 'USD'))?.card ?? '0.00', '0.00');
    });

    it('timeout: stays processing and frozen; reconciliation finds the load done and credits it once', async () => {
      const { m, id, t } = await topUpMeeting('timeout');
      assert.equal((await client.cards.getTopUp(id, t.id, { onBehalfOf: m })).status, 'processing');
      assert.equal((await balance(m, 'USDT')).frozen, '40.400000');
      await reconcile();
      await reconcile();
      const done = await client.cards.getTopUp(id, t.id, { onBehalfOf: m });
      assert.equal(done.status, 'credited');
      assert.deepEqual(await eventsOf(t.id), ['card.topup.credited@3']);
      assert.equal((await balance(m, 'USD')).card, '39.80');
      assert.equal((await balance(m, 'USDT')).frozen, '0.000000');
    });

    it(
      "timeout: an operator resolve to failed meets the issuer's answer first: the load it made is credited, " +
        'never refunded',
      async () => {
        const { m, id, t } = await topUpMeeting('timeout');
        assert.equal((await client.cards.getTopUp(id, t.id, { onBehalfOf: m })).status, 'processing');
        const refused = await admin(service, 'POST', `/admin/v1/cards/topups/${t.id}/resolve`, { status: 'failed' });
        assert.deepEqual([refused.status, refused.body.code], [400, 'state_invalid'], JSON.stringify(refused.body));
        assert.match(refused.body.message, /provider reports the top-up succeeded: it is now credited/);
        assert.equal((await client.cards.getTopUp(id, t.id, { onBehalfOf: m })).status, 'credited');
        assert.deepEqual(await eventsOf(t.id), ['card.topup.credited@3']);
        assert.equal((await balance(m, 'USD')).card, '39.80');
        assert.equal((await balance(m, 'USDT')).frozen, '0.000000');
      },
    );

    it(
      'unknown (5xx): never refunded on the answer; ' + 'reconciliation learns the issuer never got it and fails it',
      async () => {
        const { m, id, t } = await topUpMeeting('unknown');
        assert.equal((await client.cards.getTopUp(id, t.id, { onBehalfOf: m })).status, 'processing');
        assert.equal((await balance(m, 'USDT')).frozen, '40.400000');
        await reconcile();
        const done = await client.cards.getTopUp(id, t.id, { onBehalfOf: m });
        assert.deepEqual([done.status, done.failure_reason], ['failed', 'upstream_not_found']);
        assert.deepEqual(
          [(await balance(m, 'USDT')).available, (await balance(m, 'USDT')).frozen],
          ['95.000000', '0.000000'],
        );
      },
    );

    it('unknown_status: suspended (callers see processing), funds frozen, one operator alert', async () => {
      const { m, id, t } = await topUpMeeting('unknown_status');
      await reconcile();
      assert.equal((await client.cards.getTopUp(id, t.id, { onBehalfOf: m })).status, 'processing');
      const row = await rowById(service, 'card_topups', t.id);
      assert.equal(row.status, 'suspended');
      const alerts = await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100');
      assert.equal(alerts.body.data.filter((a: any) => a.object_id === t.id).length, 1);
      assert.equal((await balance(m, 'USDT')).frozen, '40.400000');
      assert.deepEqual(await eventsOf(t.id), []);
      // The operator resolves it (after checking with the issuer): credited once; a repeat answers it.
      const resolved = await admin(service, 'POST', `/admin/v1/cards/topups/${t.id}/resolve`, { status: 'credited' });
      assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
      assert.deepEqual(
        [resolved.body.status, resolved.body.internal_status, resolved.body.provider_status],
        ['credited', 'credited', 'SANDBOX_UNKNOWN_STATUS'],
      );
      assert.equal(
        (await admin(service, 'POST', `/admin/v1/cards/topups/${t.id}/resolve`, { status: 'credited' })).status,
        200,
      );
      assert.equal(
        (await admin(service, 'POST', `/admin/v1/cards/topups/${t.id}/resolve`, { status: 'failed' })).body.code,
        'state_invalid',
      );
      assert.deepEqual(await eventsOf(t.id), ['card.topup.credited@3']);
      assert.equal((await balance(m, 'USD')).card, '39.80');
      assert.equal((await balance(m, 'USDT')).frozen, '0.000000');
    });
  });
});
