/**
 * The two halves of card issuing II together, through HTTP via the SDK (docs/cards.md "Money of a
 * card that stops"): a card filled by real top-ups and spent by network messages, then closed,
 * replaced or frozen. Only a card that can spend (`cardCanSpend`) authorises or takes a top-up;
 * what comes back after the card stopped (a reversal, a refund, the rest of a smaller clearing, a
 * top-up the issuer confirms late) goes to the member's available balance once, never onto the
 * card whose balance was returned; clearings still take their holds. The ledger is verified after
 * each money step.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { instantUpstreams } from './support/service.js';
import { expectCode } from './support/expect.js';
import { useLifecycleService } from './support/card-lifecycle.js';
import { setRow } from './support/fixtures.js';

describe('card money and card lifecycle together', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  const h = useLifecycleService(instantUpstreams, (s) => ({ service, client } = s));
  const drain = () => service.workers.jobs.drain();
  const reconcile = () => service.workers.tick();
  const behave = (behavior: string) => client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior });
  /**
   * A top-up of the member's card sent while the issuer times out, its dispatch run: left processing. The issuer
   * keeps timing out until the test says otherwise.
   */
  async function unansweredTopUp(m: { external: string }, cardId: string, amount: string) {
    await behave('timeout');
    const t = await client.cards.topUp(cardId, { amount }, { onBehalfOf: m.external });
    await drain();
    assert.equal((await client.cards.getTopUp(cardId, t.id, { onBehalfOf: m.external })).status, 'processing');
    return t;
  }
  const auth = (cardId: string, amount: string) =>
    client.cards.sandboxAuthorize(cardId, { amount, merchant_name: 'Corner Shop', mcc: '5411' });
  const approved = async (cardId: string, amount: string) => {
    const r = await auth(cardId, amount);
    assert.equal(r.approved, true, `${amount}: ${r.decline_reason}`);
    return r.transaction_id;
  };
  const declined = async (cardId: string, amount: string) => {
    const r = await auth(cardId, amount);
    assert.deepEqual(
      { approved: r.approved, decline_reason: r.decline_reason },
      { approved: false, decline_reason: 'card_not_active' },
    );
  };
  /** A member (1000 USDT) with an active virtual card topped up by `usdt` through the API, credited by the issuer. */
  async function toppedUpCard(usdt = '500') {
    const m = await h.member('1000');
    const card = await h.card(m, 'virtual');
    const t = await client.cards.topUp(card.id, { amount: usdt }, { onBehalfOf: m.external });
    await drain();
    assert.equal((await client.cards.getTopUp(card.id, t.id, { onBehalfOf: m.external })).status, 'credited');
    const onCard = await h.onCard(m, card.id);
    assert.ok(onCard > 0n);
    await h.ledgerOk();
    return { m, card, onCard };
  }

  it(
    'top up → authorise → close: the topped-up balance less holds goes back once; afterwards reversals, ' +
      'refunds and the rest of a clearing go to available; clearings take their holds',
    async () => {
      const { m, card, onCard } = await toppedUpCard();
      const reversedLater = await approved(card.id, '100');
      const clearedBefore = await approved(card.id, '50');
      await client.cards.sandboxClear(card.id, { transaction_id: clearedBefore });
      const clearedLater = await approved(card.id, '30');
      await h.ledgerOk();
      assert.equal(await h.onCard(m, card.id), onCard - 180_00n);
      assert.equal(await h.held(m, card.id), 130_00n);
      const usdBefore = await h.available(m, 'USD');

      assert.equal((await client.cards.close(card.id, { onBehalfOf: m.external })).status, 'closed');
      assert.equal(
        await h.available(m, 'USD'),
        usdBefore + onCard - 180_00n,
        'the balance filled by the top-up, less holds and spending, back to available',
      );
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 130_00n);
      assert.equal(await h.entries('card.balance_return', `${card.id}:close`), 1);
      await h.ledgerOk();
      const returned = await h.available(m, 'USD');

      // A reversal after the close: the hold to available, nothing onto the closed card.
      await client.cards.sandboxReverse(card.id, { transaction_id: reversedLater });
      assert.equal(await h.available(m, 'USD'), returned + 100_00n);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 30_00n);
      await h.ledgerOk();
      // A smaller clearing after the close: taken from the hold, its rest to available.
      await client.cards.sandboxClear(card.id, { transaction_id: clearedLater, amount: '20' });
      assert.equal(await h.available(m, 'USD'), returned + 110_00n);
      assert.equal(await h.held(m, card.id), 0n);
      assert.equal(await h.onCard(m, card.id), 0n);
      await h.ledgerOk();
      // A refund of spending cleared before the close: to available as well.
      await client.cards.sandboxRefund(card.id, { transaction_id: clearedBefore, amount: '15' });
      assert.equal(await h.available(m, 'USD'), returned + 125_00n);
      assert.equal(await h.onCard(m, card.id), 0n);
      await h.ledgerOk();
      // The closed card spends and loads nothing.
      await declined(card.id, '1');
      await expectCode(client.cards.topUp(card.id, { amount: '20' }, { onBehalfOf: m.external }), 'state_invalid', 400);
      // A second close moves nothing again.
      assert.equal((await client.cards.close(card.id, { onBehalfOf: m.external })).status, 'closed');
      assert.equal(await h.available(m, 'USD'), returned + 125_00n);
    },
  );

  it(
    'a security replacement after a top-up: the topped-up balance goes back once; a later reversal goes to ' +
      'available, not onto the replaced card',
    async () => {
      const { m, card, onCard } = await toppedUpCard('200');
      const hold = await approved(card.id, '40');
      const usdBefore = await h.available(m, 'USD');
      const { id } = await client.cards.requestReplacement(card.id, { reason: 'stolen' }, { onBehalfOf: m.external });
      await client.sandbox.advanceClock(61);
      const r = await client.cards.getReplacement(id);
      assert.equal(r.status, 'completed');
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'replaced');
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard - 40_00n);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 40_00n);
      assert.equal(await h.entries('card.balance_return', id), 1);
      await h.ledgerOk();
      await client.cards.sandboxReverse(card.id, { transaction_id: hold });
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 0n);
      await declined(card.id, '1');
      // The new card starts empty and loads normally.
      const fresh = r.new_card_id!;
      const t = await client.cards.topUp(fresh, { amount: '20' }, { onBehalfOf: m.external });
      await drain();
      assert.equal((await client.cards.getTopUp(fresh, t.id, { onBehalfOf: m.external })).status, 'credited');
      assert.ok((await h.onCard(m, fresh)) > 0n);
    },
  );

  it(
    'a card frozen by a security replacement in progress authorises nothing and takes no top-up; a top-up the ' +
      'issuer confirms meanwhile arrives on available, once',
    async () => {
      const { m, card } = await toppedUpCard('100');
      // A top-up the issuer has not answered yet.
      const late = await unansweredTopUp(m, card.id, '40');
      // A security replacement the issuer does not answer either: the card is frozen, its balance returned.
      await client.cards.requestReplacement(card.id, { reason: 'pan_leaked' }, { onBehalfOf: m.external });
      await client.sandbox.advanceClock(61);
      await behave('success');
      const frozen = await client.cards.get(card.id, { onBehalfOf: m.external });
      assert.deepEqual({ status: frozen.status, frozen: frozen.frozen }, { status: 'active', frozen: true });
      assert.equal(await h.onCard(m, card.id), 0n);
      await h.ledgerOk();
      await declined(card.id, '1');
      await expectCode(client.cards.topUp(card.id, { amount: '20' }, { onBehalfOf: m.external }), 'state_invalid', 400);
      await expectCode(
        client.cards.quoteTopUp(card.id, { amount: '20' }, { onBehalfOf: m.external }),
        'state_invalid',
        400,
      );

      const usdBefore = await h.available(m, 'USD');
      await reconcile();
      await reconcile();
      const credited = await client.cards.getTopUp(card.id, late.id, { onBehalfOf: m.external });
      assert.equal(credited.status, 'credited');
      const arrival = BigInt(credited.arrival_amount.replace('.', ''));
      assert.equal(
        await h.available(m, 'USD'),
        usdBefore + arrival,
        'the late arrival on available, in the card currency',
      );
      assert.equal(await h.onCard(m, card.id), 0n, 'nothing onto the frozen card');
      assert.equal(await h.entries('card.topup_credit', late.id), 1);
    },
  );

  it(
    'a top-up the issuer confirms after the card closed arrives on available, once; nothing stays on the ' +
      'closed card',
    async () => {
      const { m, card, onCard } = await toppedUpCard('100');
      const late = await unansweredTopUp(m, card.id, '30');
      await behave('success');
      const usdBefore = await h.available(m, 'USD');
      assert.equal((await client.cards.close(card.id, { onBehalfOf: m.external })).status, 'closed');
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard);
      await reconcile();
      await reconcile();
      const credited = await client.cards.getTopUp(card.id, late.id, { onBehalfOf: m.external });
      assert.equal(credited.status, 'credited');
      const arrival = BigInt(credited.arrival_amount.replace('.', ''));
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard + arrival);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.entries('card.topup_credit', late.id), 1);
      assert.equal(await h.entries('card.balance_return', `${card.id}:close`), 1);
    },
  );

  it(
    'a non-security replacement of a card never activated: no top-up while it is in flight; one the issuer ' +
      'confirms after the balance went back arrives on available',
    async () => {
      const m = await h.member('1000');
      const card = await h.card(m, 'physical');
      assert.equal(card.status, 'unactivated');
      const first = await client.cards.topUp(card.id, { amount: '50' }, { onBehalfOf: m.external });
      await drain();
      assert.equal((await client.cards.getTopUp(card.id, first.id, { onBehalfOf: m.external })).status, 'credited');
      const onCard = await h.onCard(m, card.id);
      const late = await unansweredTopUp(m, card.id, '30');
      const usdBefore = await h.available(m, 'USD');
      const { id } = await client.cards.requestReplacement(
        card.id,
        { reason: 'not_received' },
        { onBehalfOf: m.external },
      );
      await expectCode(client.cards.topUp(card.id, { amount: '20' }, { onBehalfOf: m.external }), 'state_invalid', 400);
      await client.sandbox.advanceClock(61);
      await behave('success');
      assert.equal((await client.cards.getReplacement(id)).status, 'processing');
      assert.equal(
        await h.available(m, 'USD'),
        usdBefore + onCard,
        'the balance went back when the replacement started',
      );
      assert.equal(await h.onCard(m, card.id), 0n);
      await reconcile();
      await reconcile();
      const credited = await client.cards.getTopUp(card.id, late.id, { onBehalfOf: m.external });
      assert.equal(credited.status, 'credited');
      const arrival = BigInt(credited.arrival_amount.replace('.', ''));
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard + arrival);
      assert.equal(await h.onCard(m, card.id), 0n, 'nothing onto a card whose balance went back');
      await h.ledgerOk();
      await client.sandbox.advanceClock(3600);
      assert.equal((await client.cards.getReplacement(id)).status, 'completed');
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.available(m, 'USD'), usdBefore + onCard + arrival);
    },
  );

  // -------------------------------------------------------------------------------------------
  // A top-up not yet sent to the issuer when its card stops is failed, its freeze back once.

  /** Minor units of a decimal string at `scale`. */
  const minor = (decimal: string, scale = 6) => {
    const [whole, frac = ''] = decimal.split('.');
    return BigInt(whole! + frac.padEnd(scale, '0'));
  };
  const topUpRow = (id: string) =>
    service.ctx.db.selectFrom('card_topups').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** A top-up created and left `pending` (its dispatch job not run): the freeze in place. */
  async function pendingTopUp(m: { external: string; id: string }, cardId: string, amount: string) {
    const before = await h.available(m, 'USDT');
    const t = await client.cards.topUp(cardId, { amount }, { onBehalfOf: m.external });
    assert.equal(t.status, 'pending');
    assert.equal(await h.available(m, 'USDT'), before - minor(t.customer_total));
    return t;
  }
  /** A card topped up by 100 USDT with a top-up of `amount` left pending; `usdt`: the member's USDT before that one. */
  async function cardWithPendingTopUp(amount: string) {
    const { m, card } = await toppedUpCard('100');
    const usdt = await h.available(m, 'USDT');
    return { m, card, usdt, pending: await pendingTopUp(m, card.id, amount) };
  }
  /** The top-up failed with `reason` before reaching the issuer: one release entry, no settlement, no credit,
   * `card.topup.failed`. */
  async function failedBeforeDispatch(m: { external: string }, cardId: string, id: string, reason: string) {
    const t = await client.cards.getTopUp(cardId, id, { onBehalfOf: m.external });
    assert.deepEqual(
      { status: t.status, failure_reason: t.failure_reason },
      { status: 'failed', failure_reason: reason },
    );
    assert.equal(await h.entries('card.topup_fail', id), 1);
    assert.equal(await h.entries('card.topup_settle', id), 0);
    assert.equal(await h.entries('card.topup_credit', id), 0);
    assert.deepEqual(
      (await h.events(id)).map((e) => `${e.type}:${e.status}`),
      ['card.topup.failed:failed'],
    );
    assert.equal((await topUpRow(id)).dispatch_started_at, null, 'never sent to the issuer');
  }

  /**
   * The pending top-up failed with `reason` before dispatch and its freeze came back: the member's USDT at `usdt`,
   * nothing frozen; its dispatch job, run afterwards, releases nothing more.
   */
  async function freezeBackOnce(
    m: { external: string; id: string },
    cardId: string,
    id: string,
    reason: string,
    usdt: bigint,
  ) {
    await failedBeforeDispatch(m, cardId, id, reason);
    assert.equal(await h.available(m, 'USDT'), usdt);
    assert.equal(await h.frozen(m, 'USDT'), 0n);
    await drain();
    assert.equal(await h.entries('card.topup_fail', id), 1);
    await h.ledgerOk();
  }

  it(
    'closing: a top-up still pending fails (card_closing), its freeze back once; one already sent keeps going ' +
      'and its late confirmation lands on available',
    async () => {
      const { m, card, onCard } = await toppedUpCard('100');
      const sent = await unansweredTopUp(m, card.id, '30');
      await behave('success');
      const usdt = await h.available(m, 'USDT');
      const pending = await pendingTopUp(m, card.id, '40');
      const usd = await h.available(m, 'USD');
      assert.equal((await client.cards.close(card.id, { onBehalfOf: m.external })).status, 'closed');
      await failedBeforeDispatch(m, card.id, pending.id, 'card_closing');
      assert.equal(await h.available(m, 'USDT'), usdt, 'the pending freeze back to available, exactly');
      assert.equal(
        await h.frozen(m, 'USDT'),
        minor(sent.customer_total),
        'the dispatched one stays frozen: its outcome is unknown',
      );
      assert.equal(await h.available(m, 'USD'), usd + onCard);
      await h.ledgerOk();
      // The job runs later: nothing is sent, nothing moves again.
      await drain();
      await failedBeforeDispatch(m, card.id, pending.id, 'card_closing');
      assert.equal(await h.available(m, 'USDT'), usdt);
      // The dispatched one: reconciliation learns the issuer loaded it; it arrives on available.
      await reconcile();
      await reconcile();
      const credited = await client.cards.getTopUp(card.id, sent.id, { onBehalfOf: m.external });
      assert.equal(credited.status, 'credited');
      assert.equal(await h.available(m, 'USD'), usd + onCard + minor(credited.arrival_amount, 2));
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.frozen(m, 'USDT'), 0n);
    },
  );

  it(
    'a security replacement: a top-up still pending fails (card_frozen) when the card is frozen, its freeze ' +
      'back once',
    async () => {
      const { m, card, usdt, pending } = await cardWithPendingTopUp('40');
      const { id } = await client.cards.requestReplacement(card.id, { reason: 'stolen' }, { onBehalfOf: m.external });
      await client.sandbox.advanceClock(61);
      const r = await client.cards.getReplacement(id);
      assert.equal(r.status, 'completed');
      await failedBeforeDispatch(m, card.id, pending.id, 'card_frozen');
      const fee = minor(r.fees!.replacement) + minor(r.fees!.postage);
      assert.equal(r.fees!.asset, 'USDT');
      assert.equal(
        await h.available(m, 'USDT'),
        usdt - fee,
        'the top-up freeze back; only the replacement fee charged',
      );
      assert.equal(await h.frozen(m, 'USDT'), 0n);
      await drain();
      await failedBeforeDispatch(m, card.id, pending.id, 'card_frozen');
      assert.equal(await h.available(m, 'USDT'), usdt - fee);
    },
  );

  it(
    'a non-security replacement: a top-up still pending fails (card_replacing) when the balance goes back, its ' +
      'freeze back once',
    async () => {
      const m = await h.member('1000');
      const card = await h.card(m, 'physical');
      const usdt = await h.available(m, 'USDT');
      const pending = await pendingTopUp(m, card.id, '50');
      const { id } = await client.cards.requestReplacement(
        card.id,
        { reason: 'not_received' },
        { onBehalfOf: m.external },
      );
      await client.sandbox.advanceClock(61);
      assert.equal((await client.cards.getReplacement(id)).status, 'completed');
      await freezeBackOnce(m, card.id, pending.id, 'card_replacing', usdt);
    },
  );

  it(
    'the dispatch checks the card under its lock: a card that stopped without failing the top-up (a stop that ' +
      'raced its creation) gets no load',
    async () => {
      const { m, card, usdt, pending } = await cardWithPendingTopUp('25');
      // The stop committed without seeing this top-up (it was created concurrently): only the dispatch can catch it.
      await service.ctx.db.updateTable('cards').set({ frozen_at: new Date() }).where('id', '=', card.id).execute();
      await drain();
      await failedBeforeDispatch(m, card.id, pending.id, 'card_frozen');
      assert.equal(await h.available(m, 'USDT'), usdt);
    },
  );

  it('card expiry: a top-up still pending fails (card_expired), its freeze back once', async () => {
    const m = await h.member('1000');
    const card = await h.card(m, 'virtual');
    const now = new Date((await client.sandbox.clock()).now);
    await setRow(service, 'cards', card.id, { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() });
    const usdt = await h.available(m, 'USDT');
    const pending = await pendingTopUp(m, card.id, '20');
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    await client.sandbox.advanceClock(Math.ceil((next - now.getTime()) / 1000) + 60);
    assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'expired');
    await freezeBackOnce(m, card.id, pending.id, 'card_expired', usdt);
  });

  it(
    'a close racing the dispatch of several top-ups: each is either failed before dispatch or loaded (then ' +
      'returned with the card), never both, never neither',
    async () => {
      const m = await h.member('2000');
      const card = await h.card(m, 'virtual');
      const usdt = await h.available(m, 'USDT');
      const usd = await h.available(m, 'USD');
      const topUps = [];
      for (let i = 0; i < 4; i++) topUps.push(await pendingTopUp(m, card.id, '20'));
      const [closed] = await Promise.all([client.cards.close(card.id, { onBehalfOf: m.external }), drain()]);
      assert.equal(closed.status, 'closed');
      await drain();
      await reconcile();
      let charged = 0n;
      let arrived = 0n;
      for (const t of topUps) {
        const now = await client.cards.getTopUp(card.id, t.id, { onBehalfOf: m.external });
        const fails = await h.entries('card.topup_fail', t.id);
        const credits = await h.entries('card.topup_credit', t.id);
        if (now.status === 'failed') {
          assert.deepEqual(
            { reason: now.failure_reason, fails, credits },
            { reason: 'card_closing', fails: 1, credits: 0 },
          );
        } else {
          assert.deepEqual({ status: now.status, fails, credits }, { status: 'credited', fails: 0, credits: 1 });
          charged += minor(now.customer_total);
          arrived += minor(now.arrival_amount, 2);
        }
      }
      assert.equal(await h.available(m, 'USDT'), usdt - charged, "every failed top-up's freeze back, once");
      assert.equal(await h.frozen(m, 'USDT'), 0n);
      assert.equal(
        await h.available(m, 'USD'),
        usd + arrived,
        'every loaded top-up back to available with the card, once',
      );
      assert.equal(await h.onCard(m, card.id), 0n);
    },
  );
});
