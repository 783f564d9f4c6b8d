/**
 * Card transactions through HTTP via the SDK: authorisations from the card network (the sandbox
 * helper of extensions 8) decided against the card's status, its currency, the merchant rules
 * (names and MCCs, white and black), every limit layer (single, daily, monthly; the member's
 * card-level limits and the product's caps; days and months on the merchant's clock) and the
 * card balance, each decline recorded with its reason; clearings (equal, smaller, larger),
 * reversals and refunds; each money movement one entry, and the ledger verified after each.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { accountBalance } from '../src/money/index.js';
import { useTestService, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import {
  eventsAbout,
  setCardStatus,
  patchCardProducts,
  kycMember,
  approvedCard,
  entryKinds,
} from './support/fixtures.js';

describe('card transactions', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({ config: { simulatorConfirmDelayMs: 0 } }, (s) => ({ service, client } = s));

  const ledgerClean = () => expectLedgerClean(service);
  // Every test ends on a ledger that verifies.
  afterEach(ledgerClean);
  const drain = () => service.workers.jobs.drain();
  const eventsOf = async (id: string) =>
    (await eventsAbout(service, id, ['type', 'status', 'status_version'])).map(
      (e) => `${e.type}:${e.status}@${e.status_version}`,
    );

  /** A member with an active virtual card holding 497.50 USD (500 USDT topped up at mid less 0.5 %). */
  async function fundedCard() {
    const { id: memberId, external } = await kycMember(service, client, { prefix: 'cx', deposits: { USDT: '1000' } });
    const id = await approvedCard(client, external);
    await client.cards.topUp(id, { amount: '500' }, { onBehalfOf: external });
    await drain();
    return { m: external, memberId, id };
  }
  /**
   * One funded card for three tests that assert no balance of it, only decisions and records
   * (made when the first asks, so each also runs alone): the merchant rules (they end deleted),
   * the product caps (the card has no limits of its own; the test starts a new month on the
   * merchant's clock first, so the earlier tests' spending is not in its day or month; 497.50 USD
   * covers both tests' spending) and the read of a transaction by its id. The others assert the
   * card's balances, set its status or limits, or read its empty list: their own card.
   */
  let sharedCard: ReturnType<typeof fundedCard> | undefined;
  const sharedFundedCard = () => (sharedCard ??= fundedCard());
  const accounts = async (memberId: string, cardId: string) => ({
    card: await accountBalance(service.ctx.db, 'sandbox', { owner: 'member', memberId, bucket: 'card', cardId }, 'USD'),
    held: await accountBalance(
      service.ctx.db,
      'sandbox',
      { owner: 'member', memberId, bucket: 'card_held', cardId },
      'USD',
    ),
  });
  const auth = (id: string, amount: string, merchant_name = 'Corner Shop', mcc = '5411', currency?: string) =>
    client.cards.sandboxAuthorize(id, { amount, merchant_name, mcc, ...(currency ? { currency } : {}) });
  const declined = async (
    id: string,
    amount: string,
    reason: string,
    merchant_name?: string,
    mcc?: string,
    currency?: string,
  ) => {
    const r = await auth(id, amount, merchant_name, mcc, currency);
    assert.deepEqual(
      { approved: r.approved, decline_reason: r.decline_reason },
      { approved: false, decline_reason: reason },
      `${amount} ${merchant_name ?? ''} ${mcc ?? ''}`,
    );
    return r;
  };
  const approved = async (id: string, amount: string, merchant_name?: string, mcc?: string) => {
    const r = await auth(id, amount, merchant_name, mcc);
    assert.equal(r.approved, true, `${amount} ${merchant_name ?? ''} ${mcc ?? ''}: ${r.decline_reason}`);
    assert.equal(r.decline_reason, undefined);
    return r;
  };
  const setStatus = (id: string, status: string) => setCardStatus(service, id, status);
  const setProducts = (patch: Record<string, unknown>) => patchCardProducts(service, patch);
  const defaultCaps = { max_single: '10000', max_daily: '20000', max_monthly: '100000' };
  /** Advances the merchant's sandbox clock to one hour past the next UTC day (or month) boundary. */
  async function advanceTo(boundary: 'day' | 'month') {
    const now = new Date((await client.sandbox.clock()).now);
    const next =
      boundary === 'day'
        ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
        : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    await client.sandbox.advanceClock(Math.ceil((next - now.getTime()) / 1000) + 3600);
  }
  /** One hour into a new UTC month, so that a test's days do not cross a month boundary under it. */
  async function startOfMonth() {
    await advanceTo('month');
  }

  it('approves within every rule: the amount is held (card → held), one entry, recorded with its event', async () => {
    const { m, memberId, id } = await fundedCard();
    assert.deepEqual(await accounts(memberId, id), { card: 49750n, held: 0n });
    const r = await approved(id, '12.34');
    assert.match(r.transaction_id, /^ctx_/);
    assert.deepEqual(await accounts(memberId, id), { card: 49750n - 1234n, held: 1234n });
    // The member's `card` bucket is the sum: a hold does not change it.
    assert.equal((await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === 'USD')!.card, '497.50');
    assert.deepEqual(await entryKinds(service, r.transaction_id), ['card.auth_hold']);
    assert.deepEqual(await eventsOf(r.transaction_id), ['card.transaction.authorization:approved@1']);
    // The helper's idempotency key: a retry replays the decision, it never holds twice.
    const key = randomUUID();
    const once = await client.cards.sandboxAuthorize(
      id,
      { amount: '1', merchant_name: 'Corner Shop', mcc: '5411' },
      { idempotencyKey: key },
    );
    const again = await client.cards.sandboxAuthorize(
      id,
      { amount: '1', merchant_name: 'Corner Shop', mcc: '5411' },
      { idempotencyKey: key },
    );
    assert.deepEqual(again, once);
    assert.deepEqual(await accounts(memberId, id), { card: 49750n - 1334n, held: 1334n });
    await client.cards.sandboxReverse(id, { transaction_id: once.transaction_id });
    const list = [];
    for await (const t of client.cards.listTransactions(id, { onBehalfOf: m })) list.push(t);
    assert.deepEqual(
      list.map((t) => t.type),
      ['reversal', 'authorization', 'authorization'],
    );
    assert.deepEqual(
      { ...list[2], created_at: typeof list[2]!.created_at },
      {
        id: r.transaction_id,
        card_id: id,
        type: 'authorization',
        status: 'approved',
        status_version: 1,
        amount: '12.34',
        currency: 'USD',
        merchant_name: 'Corner Shop',
        mcc: '5411',
        decline_reason: null,
        authorization_id: null,
        cleared_amount: '0.00',
        refunded_amount: '0.00',
        reversed_amount: '0.00',
        expires_at: new Date(Date.parse(list[2]!.created_at) + 7 * 86_400_000).toISOString(),
        reversal_reason: null,
        created_at: 'string',
      },
    );
    assert.equal(list[0]!.reversal_reason, 'network');
  });

  it('declines by card status, currency and balance, recording the reason and moving nothing', async () => {
    const { m, memberId, id } = await fundedCard();
    await declined(id, '497.51', 'insufficient_funds');
    await declined(id, '10', 'currency_not_supported', undefined, undefined, 'EUR');
    for (const s of ['unactivated', 'closing', 'closed', 'expired', 'replaced']) {
      await setStatus(id, s);
      await declined(id, '10', 'card_not_active');
    }
    await setStatus(id, 'active');
    assert.deepEqual(await accounts(memberId, id), { card: 49750n, held: 0n });
    const list = [];
    for await (const t of client.cards.listTransactions(id, { onBehalfOf: m, limit: 2 })) list.push(t);
    assert.equal(list.length, 7);
    assert.ok(list.every((t) => t.status === 'declined' && t.decline_reason !== null));
    assert.equal(list[0]!.decline_reason, 'card_not_active');
    assert.equal(list[6]!.decline_reason, 'insufficient_funds');
    const events = await eventsOf(list[0]!.id);
    assert.deepEqual(events, ['card.transaction.authorization:declined@1']);
  });

  it(
    'parallel authorisations against one card balance: each decided with the card locked, ' + 'never overdrawn',
    async () => {
      const { memberId, id } = await fundedCard();
      const answers = await Promise.all(Array.from({ length: 5 }, () => auth(id, '200')));
      assert.equal(answers.filter((a) => a.approved).length, 2);
      assert.deepEqual(
        answers.filter((a) => !a.approved).map((a) => a.decline_reason),
        ['insufficient_funds', 'insufficient_funds', 'insufficient_funds'],
      );
      assert.deepEqual(await accounts(memberId, id), { card: 9750n, held: 40000n });
    },
  );

  it(
    'merchant rules: white lets only listed names or MCCs through; black refuses them (names trimmed, ' +
      'case-insensitive)',
    async () => {
      const { m, id } = await sharedFundedCard();
      await client.cards.setMerchantRules(
        id,
        { rule_type: 'white', merchant_names: ['Coffee Bar'], mcc_list: ['5812'] },
        { onBehalfOf: m },
      );
      await approved(id, '1', '  coffee bar ', '5999');
      await approved(id, '1', 'Any Restaurant', '5812');
      await declined(id, '1', 'merchant_not_allowed', 'Corner Shop', '5411');
      await client.cards.setMerchantRules(
        id,
        { rule_type: 'black', merchant_names: ['Casino Royale'], mcc_list: ['7995'] },
        { onBehalfOf: m },
      );
      await declined(id, '1', 'merchant_blocked', 'CASINO ROYALE', '5411');
      await declined(id, '1', 'merchant_blocked', 'Lucky Games', '7995');
      await approved(id, '1', 'Corner Shop', '5411');
      await client.cards.deleteMerchantRules(id, { onBehalfOf: m });
      await approved(id, '1', 'Casino Royale', '7995');
    },
  );

  it(
    "card-level limits: single, daily and monthly (card currency, the merchant's clock); a reversal frees its " +
      'amount',
    async () => {
      const { m, id } = await fundedCard();
      await startOfMonth();
      await client.cards.setLimits(id, { single: '50', daily: '80', monthly: '120' }, { onBehalfOf: m });
      await declined(id, '50.01', 'card_limit_single');
      const a = await approved(id, '50');
      await approved(id, '30');
      await declined(id, '0.01', 'card_limit_daily');
      // A reversed authorisation no longer counts.
      await client.cards.sandboxReverse(id, { transaction_id: a.transaction_id });
      await approved(id, '20');
      await advanceTo('day');
      // 50 today would make 100 + ... monthly: 30 + 20 + 50 = 100 ≤ 120, then 20.01 more is over.
      await approved(id, '50');
      await declined(id, '20.01', 'card_limit_monthly');
      await advanceTo('month');
      await approved(id, '50');
      await drain();
    },
  );

  it('product caps apply beside the card limits: single, daily, monthly', async () => {
    const { id } = await sharedFundedCard();
    await startOfMonth();
    await setProducts({ max_single: '100', max_daily: '150', max_monthly: '200' });
    try {
      await declined(id, '100.01', 'product_limit_single');
      await approved(id, '100');
      await declined(id, '50.01', 'product_limit_daily');
      await approved(id, '50');
      await advanceTo('day');
      await approved(id, '50');
      await declined(id, '0.01', 'product_limit_monthly');
      await advanceTo('month');
      await approved(id, '100');
    } finally {
      await setProducts(defaultCaps);
    }
  });

  it('clearing equal to, below and above the authorisation; reversal; refunds up to the cleared amount', async () => {
    const { m, memberId, id } = await fundedCard();
    // Equal.
    const a = await approved(id, '100');
    const c = await client.cards.sandboxClear(id, { transaction_id: a.transaction_id });
    assert.deepEqual(
      [c.type, c.status, c.amount, c.authorization_id],
      ['clearing', 'posted', '100.00', a.transaction_id],
    );
    assert.deepEqual(await accounts(memberId, id), { card: 39750n, held: 0n });
    await expectCode(client.cards.sandboxClear(id, { transaction_id: a.transaction_id }), 'state_invalid');
    await expectCode(client.cards.sandboxReverse(id, { transaction_id: a.transaction_id }), 'state_invalid');
    // Below: the rest of the hold goes back to the card.
    const b = await approved(id, '50');
    await client.cards.sandboxClear(id, { transaction_id: b.transaction_id, amount: '45.50' });
    assert.deepEqual(await accounts(memberId, id), { card: 39750n - 4550n, held: 0n });
    // Above (a tip): the difference comes from the card balance.
    const t = await approved(id, '20');
    await client.cards.sandboxClear(id, { transaction_id: t.transaction_id, amount: '23' });
    assert.deepEqual(await accounts(memberId, id), { card: 35200n - 2300n, held: 0n });
    // Reversal.
    const r = await approved(id, '10');
    assert.deepEqual(await accounts(memberId, id), { card: 32900n - 1000n, held: 1000n });
    const rev = await client.cards.sandboxReverse(id, { transaction_id: r.transaction_id });
    assert.deepEqual([rev.type, rev.amount], ['reversal', '10.00']);
    assert.deepEqual(await accounts(memberId, id), { card: 32900n, held: 0n });
    await expectCode(client.cards.sandboxClear(id, { transaction_id: r.transaction_id }), 'state_invalid');
    // Refunds: only cleared spending, at most what is left.
    await expectCode(client.cards.sandboxRefund(id, { transaction_id: r.transaction_id }), 'state_invalid');
    const f1 = await client.cards.sandboxRefund(id, { transaction_id: a.transaction_id, amount: '30' });
    assert.deepEqual([f1.type, f1.amount], ['refund', '30.00']);
    await expectCode(
      client.cards.sandboxRefund(id, { transaction_id: a.transaction_id, amount: '70.01' }),
      'amount_out_of_range',
    );
    const f2 = await client.cards.sandboxRefund(id, { transaction_id: a.transaction_id });
    assert.equal(f2.amount, '70.00');
    await expectCode(client.cards.sandboxRefund(id, { transaction_id: a.transaction_id }), 'amount_out_of_range');
    assert.deepEqual(await accounts(memberId, id), { card: 32900n + 10000n, held: 0n });
    // A clearing larger than hold + balance is refused, moving nothing.
    const big = await approved(id, '400');
    await expectCode(
      client.cards.sandboxClear(id, { transaction_id: big.transaction_id, amount: '430' }),
      'insufficient_balance',
    );
    assert.deepEqual(await accounts(memberId, id), { card: 2900n, held: 40000n });
    // The authorisation's own record; the list filters by type.
    const all = [];
    for await (const x of client.cards.listTransactions(id, { onBehalfOf: m })) all.push(x);
    const authA = all.find((x) => x.id === a.transaction_id)!;
    assert.deepEqual(
      [authA.status, authA.status_version, authA.cleared_amount, authA.refunded_amount],
      ['cleared', 2, '100.00', '100.00'],
    );
    const refunds = [];
    for await (const x of client.cards.listTransactions(id, { onBehalfOf: m, type: 'refund' })) refunds.push(x.id);
    assert.deepEqual(refunds, [f2.id, f1.id]);
    assert.deepEqual(await eventsOf(f1.id), ['card.transaction.refund:posted@1']);
    // One entry per movement.
    for (const x of [c, rev, f1])
      assert.equal(
        (await service.ctx.db.selectFrom('journal_entries').select('id').where('reference_id', '=', x.id).execute())
          .length,
        1,
      );
  });

  it(
    "GET /v1/cards/transactions/{id}: by the id alone (a card.transaction.* event's data.id), prefix optional; " +
      'member, merchant; another member: not_found',
    async () => {
      const { m, id } = await sharedFundedCard();
      const r = await approved(id, '3.21');
      const declinedOne = await declined(id, '10', 'currency_not_supported', undefined, undefined, 'EUR');
      const listed = [];
      for await (const t of client.cards.listTransactions(id, { onBehalfOf: m })) listed.push(t);
      const [event] = await eventsAbout(service, r.transaction_id, ['object', 'object_id']);
      assert.equal(event.object, 'card_transaction');
      // The same object as the card's list.
      assert.deepEqual(
        await client.cards.getTransaction(event.object_id, { onBehalfOf: m }),
        listed.find((t) => t.id === r.transaction_id),
      );
      assert.deepEqual(
        await client.cards.getTransaction(declinedOne.transaction_id.slice(4), { onBehalfOf: m }),
        listed.find((t) => t.id === declinedOne.transaction_id),
      );
      assert.equal((await client.cards.getTransaction(r.transaction_id)).id, r.transaction_id);
      const other = `cx-${randomUUID().slice(0, 8)}`;
      await client.members.create({ external_member_id: other });
      await expectCode(client.cards.getTransaction(r.transaction_id, { onBehalfOf: other }), 'not_found', 404);
      await expectCode(client.cards.getTransaction(`ctx_${randomUUID()}`), 'not_found', 404);
    },
  );

  it("refuses malformed messages and unknown cards; transactions are the member's own", async () => {
    const { m, id } = await fundedCard();
    await expectCode(auth(id, '1.001'), 'invalid_request');
    await expectCode(auth(id, 'abc'), 'invalid_request');
    await expectCode(auth(id, '1', '   '), 'invalid_request');
    await assert.rejects(auth(id, '1', 'Shop', '12a'));
    await expectCode(auth(`crd_${randomUUID()}`, '1'), 'not_found', 404);
    await expectCode(client.cards.sandboxClear(id, { transaction_id: `ctx_${randomUUID()}` }), 'not_found', 404);
    const other = `cx-${randomUUID().slice(0, 8)}`;
    await client.members.create({ external_member_id: other });
    const it = client.cards.listTransactions(id, { onBehalfOf: other })[Symbol.asyncIterator]();
    await expectCode(it.next(), 'not_found', 404);
    assert.equal(
      (await client.cards.listTransactions(id, { onBehalfOf: m })[Symbol.asyncIterator]().next()).done,
      true,
    );
  });
});
