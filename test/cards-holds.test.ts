/**
 * Authorisation holds through HTTP via the SDK (docs/cards.md "Transactions"): a hold neither
 * cleared nor reversed is released when it expires (7 days; 30 for lodging, vehicle rental and
 * cruise MCCs; the merchant's sandbox clock), onto the card or, once the card stopped, to
 * available, exactly once, recorded as a `reversal` with `reversal_reason: expired`; a late
 * presentment still clears from the card balance; partial reversals; the limits count what an
 * authorisation still holds or what cleared; another currency than the card's is declined. The
 * ledger is verified after each money step and at the end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import { expectCode } from './support/expect.js';
import { useLifecycleService } from './support/card-lifecycle.js';

const day = 86_400;

describe('card authorisation holds: expiry, partial reversals, limits', () => {
  let client: MerchantWalletClient;
  const h = useLifecycleService({ simulatorConfirmDelayMs: 0 }, (s) => ({ client } = s));
  const auth = (cardId: string, amount: string, mcc = '5411', currency?: string) =>
    client.cards.sandboxAuthorize(cardId, {
      amount,
      merchant_name: 'Corner Shop',
      mcc,
      ...(currency ? { currency } : {}),
    });
  const approved = async (cardId: string, amount: string, mcc?: string) => {
    const r = await auth(cardId, amount, mcc);
    assert.equal(r.approved, true, `${amount}: ${r.decline_reason}`);
    return r.transaction_id;
  };
  const declined = async (cardId: string, amount: string, reason: string) => {
    const r = await auth(cardId, amount);
    assert.deepEqual(
      { approved: r.approved, decline_reason: r.decline_reason },
      { approved: false, decline_reason: reason },
      amount,
    );
  };
  async function transactions(cardId: string, m: { external: string }) {
    const list = [];
    for await (const t of client.cards.listTransactions(cardId, { onBehalfOf: m.external })) list.push(t);
    return list;
  }
  const authorization = async (cardId: string, m: { external: string }, id: string) =>
    (await transactions(cardId, m)).find((t) => t.id === id)!;
  const eventsOf = async (id: string) => (await h.events(id)).map((e) => `${e.type}:${e.status}@${e.status_version}`);
  /**
   * One card of 100 USD for the two tests of an authorisation in another currency (made when the
   * first asks, so each also runs alone): both are declined, nothing is held or moved (the first
   * asserts it: the balance it reads is still the card's 100 USD), the second asserts no balance.
   */
  let otherCurrencyCard: ReturnType<typeof h.fundedCard> | undefined;
  const sharedOtherCurrencyCard = () => (otherCurrencyCard ??= h.fundedCard(100_00n));
  /** One hour into the next UTC day on the merchant's clock, so that a test's limits do not cross a day under it. */
  async function startOfDay() {
    const now = new Date((await client.sandbox.clock()).now);
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    await client.sandbox.advanceClock(Math.ceil((next - now.getTime()) / 1000) + 3600);
  }

  it(
    'a hold neither cleared nor reversed is released after 7 days (30 for a hotel): back onto the card once, ' +
      'the authorisation reversed by expiry',
    async () => {
      const { m, card } = await h.fundedCard(500_00n);
      const shop = await approved(card.id, '100');
      const hotel = await approved(card.id, '200', '7011');
      const a = await authorization(card.id, m, shop);
      assert.equal(Date.parse(a.expires_at!) - Date.parse(a.created_at), 7 * day * 1000);
      const b = await authorization(card.id, m, hotel);
      assert.equal(Date.parse(b.expires_at!) - Date.parse(b.created_at), 30 * day * 1000);
      assert.equal(await h.onCard(m, card.id), 200_00n);
      assert.equal(await h.held(m, card.id), 300_00n);

      await client.sandbox.advanceClock(7 * day - 60);
      assert.equal((await authorization(card.id, m, shop)).status, 'approved', 'not yet');
      await client.sandbox.advanceClock(120);
      const expired = await authorization(card.id, m, shop);
      assert.deepEqual(
        {
          status: expired.status,
          status_version: expired.status_version,
          reversed_amount: expired.reversed_amount,
          reversal_reason: expired.reversal_reason,
        },
        { status: 'reversed', status_version: 2, reversed_amount: '100.00', reversal_reason: 'expired' },
      );
      const release = (await transactions(card.id, m)).find(
        (t) => t.type === 'reversal' && t.authorization_id === shop,
      )!;
      assert.deepEqual(
        { status: release.status, amount: release.amount, reversal_reason: release.reversal_reason },
        { status: 'posted', amount: '100.00', reversal_reason: 'expired' },
      );
      assert.deepEqual(await eventsOf(release.id), ['card.transaction.reversal:posted@1']);
      assert.equal(await h.onCard(m, card.id), 300_00n);
      assert.equal(await h.held(m, card.id), 200_00n);
      assert.equal(await h.entries('card.auth_expiry', shop), 1);
      await h.ledgerOk();
      // A network reversal of an expired hold: nothing left to reverse.
      await expectCode(client.cards.sandboxReverse(card.id, { transaction_id: shop }), 'state_invalid', 400);

      await client.sandbox.advanceClock(23 * day);
      assert.equal((await authorization(card.id, m, hotel)).status, 'reversed');
      assert.equal(await h.onCard(m, card.id), 500_00n);
      assert.equal(await h.held(m, card.id), 0n);
      // Once: later advances post nothing more.
      await client.sandbox.advanceClock(31 * day);
      assert.equal(await h.entries('card.auth_expiry', shop), 1);
      assert.equal(await h.entries('card.auth_expiry', hotel), 1);
      assert.equal(await h.onCard(m, card.id), 500_00n);
    },
  );

  it(
    'a late presentment of an expired authorisation still clears, from the card balance; cleared or reversed ' +
      'ones never expire',
    async () => {
      const { m, card } = await h.fundedCard(300_00n);
      const late = await approved(card.id, '100');
      const cleared = await approved(card.id, '50');
      await client.cards.sandboxClear(card.id, { transaction_id: cleared, amount: '40' });
      const reversed = await approved(card.id, '30');
      await client.cards.sandboxReverse(card.id, { transaction_id: reversed });
      assert.equal(await h.onCard(m, card.id), 300_00n - 100_00n - 40_00n);
      await client.sandbox.advanceClock(8 * day);
      assert.equal(await h.entries('card.auth_expiry', cleared), 0);
      assert.equal(await h.entries('card.auth_expiry', reversed), 0);
      assert.equal(await h.onCard(m, card.id), 300_00n - 40_00n, 'only the open hold came back');
      assert.equal(await h.held(m, card.id), 0n);
      const clearing = await client.cards.sandboxClear(card.id, { transaction_id: late, amount: '90' });
      assert.equal(clearing.amount, '90.00');
      const after = await authorization(card.id, m, late);
      assert.deepEqual(
        { status: after.status, cleared_amount: after.cleared_amount },
        { status: 'cleared', cleared_amount: '90.00' },
      );
      assert.equal(await h.onCard(m, card.id), 300_00n - 40_00n - 90_00n);
      assert.equal(await h.held(m, card.id), 0n);
      // Cleared once only; a network-reversed authorisation is not a late presentment.
      await expectCode(client.cards.sandboxClear(card.id, { transaction_id: late }), 'state_invalid', 400);
      await expectCode(client.cards.sandboxClear(card.id, { transaction_id: reversed }), 'state_invalid', 400);
      // A late presentment larger than the card balance is refused.
      const big = await approved(card.id, '170');
      await client.sandbox.advanceClock(8 * day);
      await client.cards.sandboxAuthorize(card.id, { amount: '100', merchant_name: 'Other', mcc: '5411' });
      await expectCode(
        client.cards.sandboxClear(card.id, { transaction_id: big, amount: '171' }),
        'insufficient_balance',
        400,
      );
    },
  );

  it('a hold that expires after the card closed goes to available, never onto the closed card', async () => {
    const { m, card } = await h.fundedCard(100_00n);
    const hold = await approved(card.id, '60');
    const usd = await h.available(m, 'USD');
    assert.equal((await client.cards.close(card.id, { onBehalfOf: m.external })).status, 'closed');
    assert.equal(await h.available(m, 'USD'), usd + 40_00n);
    await client.sandbox.advanceClock(7 * day + 60);
    assert.equal((await authorization(card.id, m, hold)).status, 'reversed');
    assert.equal(await h.available(m, 'USD'), usd + 100_00n);
    assert.equal(await h.onCard(m, card.id), 0n);
    assert.equal(await h.held(m, card.id), 0n);
    assert.equal(await h.entries('card.auth_expiry', hold), 1);
  });

  it('partial reversals release part of the hold; the rest clears or expires; at most what is held', async () => {
    const { m, card } = await h.fundedCard(200_00n);
    const a = await approved(card.id, '100');
    const part = await client.cards.sandboxReverse(card.id, { transaction_id: a, amount: '30' });
    assert.deepEqual(
      { type: part.type, amount: part.amount, reversal_reason: part.reversal_reason },
      { type: 'reversal', amount: '30.00', reversal_reason: 'network' },
    );
    let row = await authorization(card.id, m, a);
    assert.deepEqual(
      { status: row.status, reversed_amount: row.reversed_amount },
      { status: 'approved', reversed_amount: '30.00' },
    );
    assert.equal(await h.onCard(m, card.id), 130_00n);
    assert.equal(await h.held(m, card.id), 70_00n);
    await expectCode(
      client.cards.sandboxReverse(card.id, { transaction_id: a, amount: '70.01' }),
      'amount_out_of_range',
      400,
    );
    await expectCode(
      client.cards.sandboxReverse(card.id, { transaction_id: a, amount: '0' }),
      'amount_out_of_range',
      400,
    );
    await h.ledgerOk();
    // The expiry releases only what is still held.
    await client.sandbox.advanceClock(7 * day + 60);
    row = await authorization(card.id, m, a);
    assert.deepEqual(
      { status: row.status, reversed_amount: row.reversed_amount, reversal_reason: row.reversal_reason },
      { status: 'reversed', reversed_amount: '100.00', reversal_reason: 'expired' },
    );
    assert.equal(await h.onCard(m, card.id), 200_00n);
    assert.equal(await h.held(m, card.id), 0n);
    // A clearing after a partial reversal takes from what is left of the hold.
    const b = await approved(card.id, '80');
    await client.cards.sandboxReverse(card.id, { transaction_id: b, amount: '20' });
    await client.cards.sandboxClear(card.id, { transaction_id: b, amount: '50' });
    assert.equal(await h.onCard(m, card.id), 150_00n, 'the rest of the hold (10) back onto the card');
    assert.equal(await h.held(m, card.id), 0n);
    // The rest reversed: the authorisation becomes reversed.
    const c = await approved(card.id, '40');
    await client.cards.sandboxReverse(card.id, { transaction_id: c, amount: '15' });
    await client.cards.sandboxReverse(card.id, { transaction_id: c });
    row = await authorization(card.id, m, c);
    assert.deepEqual(
      { status: row.status, reversed_amount: row.reversed_amount },
      { status: 'reversed', reversed_amount: '40.00' },
    );
    assert.equal(await h.onCard(m, card.id), 150_00n);
  });

  it('the limits count what an authorisation still holds or what cleared, not what was authorised', async () => {
    const { m, card } = await h.fundedCard(1000_00n);
    await startOfDay();
    await client.cards.setLimits(card.id, { daily: '100' }, { onBehalfOf: m.external });
    const a = await approved(card.id, '80');
    await declined(card.id, '30', 'card_limit_daily');
    // A partial reversal frees what it released: 30 counted.
    await client.cards.sandboxReverse(card.id, { transaction_id: a, amount: '50' });
    const b = await approved(card.id, '60');
    await declined(card.id, '10.01', 'card_limit_daily');
    // A smaller clearing counts what cleared: 30 + 20.
    await client.cards.sandboxClear(card.id, { transaction_id: b, amount: '20' });
    await approved(card.id, '50');
    await declined(card.id, '0.01', 'card_limit_daily');
    // A larger clearing counts what cleared: 30 + 20 + 50 → clearing `a` at 40 makes 110.
    await client.cards.sandboxClear(card.id, { transaction_id: a, amount: '40' });
    await declined(card.id, '0.01', 'card_limit_daily');
    // A refund does not give the limit back.
    await client.cards.sandboxRefund(card.id, { transaction_id: b, amount: '20' });
    await declined(card.id, '0.01', 'card_limit_daily');
  });

  it(
    "an authorisation in another currency than the card's is declined currency_not_supported, " + 'nothing held',
    async () => {
      const { m, card } = await sharedOtherCurrencyCard();
      const r = await auth(card.id, '10', '5411', 'EUR');
      assert.deepEqual(
        { approved: r.approved, decline_reason: r.decline_reason },
        { approved: false, decline_reason: 'currency_not_supported' },
      );
      const row = await authorization(card.id, m, r.transaction_id);
      assert.deepEqual(
        { status: row.status, currency: row.currency, expires_at: row.expires_at },
        { status: 'declined', currency: 'EUR', expires_at: null },
      );
      assert.equal(await h.onCard(m, card.id), 100_00n);
      assert.equal(await h.held(m, card.id), 0n);
    },
  );

  it(
    'a clearing without an amount after a partial reversal clears what is still held, not the reversed part ' + 'again',
    async () => {
      const { m, card } = await h.fundedCard(500_00n);
      const a = await approved(card.id, '100');
      await client.cards.sandboxReverse(card.id, { transaction_id: a, amount: '30' });
      assert.equal(await h.onCard(m, card.id), 430_00n);
      const clearing = await client.cards.sandboxClear(card.id, { transaction_id: a });
      assert.equal(clearing.amount, '70.00');
      const row = await authorization(card.id, m, a);
      assert.deepEqual(
        { status: row.status, cleared_amount: row.cleared_amount },
        { status: 'cleared', cleared_amount: '70.00' },
      );
      assert.equal(await h.onCard(m, card.id), 430_00n, 'the 30 released stays released');
      assert.equal(await h.held(m, card.id), 0n);
      // A late presentment without an amount: what the hold still held when it expired (60 of 100 after a reversal of
      // 40).
      const b = await approved(card.id, '100');
      await client.cards.sandboxReverse(card.id, { transaction_id: b, amount: '40' });
      await client.sandbox.advanceClock(7 * day + 60);
      assert.equal(await h.onCard(m, card.id), 430_00n);
      const late = await client.cards.sandboxClear(card.id, { transaction_id: b });
      assert.equal(late.amount, '60.00');
      assert.equal(await h.onCard(m, card.id), 370_00n);
    },
  );

  it("an authorisation in another currency is read and shown in that currency's decimals", async () => {
    const { card } = await sharedOtherCurrencyCard();
    // USDT has 6 places, the USD card 2: the amount is the message's, in its own currency.
    const r = await auth(card.id, '10.123456', '5411', 'USDT');
    assert.deepEqual(
      { approved: r.approved, decline_reason: r.decline_reason },
      { approved: false, decline_reason: 'currency_not_supported' },
    );
    const row = await client.cards.getTransaction(r.transaction_id);
    assert.deepEqual({ amount: row.amount, currency: row.currency }, { amount: '10.123456', currency: 'USDT' });
    const s = await auth(card.id, '10.50', '5411', 'USDT');
    assert.equal((await client.cards.getTransaction(s.transaction_id)).amount, '10.500000');
  });

  it('an expiry racing a clearing: the hold is taken once, by whichever locks the card first', async () => {
    const { m, card } = await h.fundedCard(300_00n);
    const a = await approved(card.id, '100');
    await client.sandbox.advanceClock(7 * day - 5);
    const [, clearing] = await Promise.all([
      client.sandbox.advanceClock(60),
      client.cards.sandboxClear(card.id, { transaction_id: a, amount: '100' }),
    ]);
    assert.equal(clearing.amount, '100.00');
    const row = await authorization(card.id, m, a);
    assert.deepEqual(
      { status: row.status, cleared_amount: row.cleared_amount },
      { status: 'cleared', cleared_amount: '100.00' },
    );
    // Cleared in time: no expiry; cleared late: the hold came back first and the clearing took it from the card. Either
    // way 100 left, once.
    assert.ok((await h.entries('card.auth_expiry', a)) <= 1);
    assert.equal(await h.onCard(m, card.id), 200_00n);
    assert.equal(await h.held(m, card.id), 0n);
  });
});
