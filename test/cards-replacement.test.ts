/**
 * Card replacement through HTTP via the SDK (docs/cards.md, "Replacement, closing and expiry"):
 * the request's rules (reasons, note, one in flight, non-security only before activation), the
 * executor driven by the sandbox clock (security: card frozen, balance back once, fees charged,
 * old card `replaced`, new card linked; non-security: inventory voided, no fees), issuer timeouts
 * and refusals, a second run and a second advance changing nothing, and the events. The ledger is
 * verified after each money step.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { runReplacement } from '../src/modules/cards/replacements/executor.js';
import { dueLifecycleScopes } from '../src/modules/cards/queries.js';
import { admin, newMerchantClient } from './support/service.js';
import { expectCode } from './support/expect.js';
import { expectOwnersCardOnly, lifecycleHelpers, useLifecycleService } from './support/card-lifecycle.js';
import { setRow, withUpstream } from './support/fixtures.js';

describe('card replacement', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  const h = useLifecycleService({ simulatorConfirmDelayMs: 0 }, (s) => ({ service, client, merchantId } = s));
  const advance = (seconds = 61) => client.sandbox.advanceClock(seconds);
  /** Member `m` asks for its card to be replaced, for `reason`. */
  const requestReplacement = (m: { external: string }, cardId: string, reason: string) =>
    client.cards.requestReplacement(cardId, { reason }, { onBehalfOf: m.external });

  /** A replacement requested (reason `damaged`) for a new virtual card of a merchant of its own. */
  const ownMerchantReplacement = async () => {
    const own = await newMerchantClient(service);
    const helpers = lifecycleHelpers(() => ({ service, ...own }));
    const m = await helpers.member();
    const card = await helpers.card(m, 'virtual');
    const created = await own.client.cards.requestReplacement(
      card.id,
      { reason: 'damaged' },
      { onBehalfOf: m.external },
    );
    return { own, m, card, created };
  };

  it(
    'refuses a reason outside the enumeration, a non-security reason on an activated card, and a card of ' +
      'another member',
    async () => {
      const { m, card } = await h.memberWithCard('virtual');
      // Not a reason at all; then reasons not about security, which an activated card cannot give.
      const refused = [
        ...['bored', ''].map((reason) => [reason, 'invalid_request']),
        ...['lost_in_transit', 'not_received', 'production_error', 'name_error'].map((reason) => [
          reason,
          'state_invalid',
        ]),
      ];
      for (const [reason, code] of refused)
        await expectCode(client.cards.requestReplacement(card.id, { reason }, { onBehalfOf: m.external }), code, 400);
      const other = await h.member('0');
      await expectOwnersCardOnly(
        (cardId, member) => client.cards.requestReplacement(cardId, { reason: 'stolen' }, { onBehalfOf: member }),
        card.id,
        m.external,
        other.external,
      );
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'active');
    },
  );

  it('the lifecycle ticker picks a scope when its replacement is due on its clock, not while it waits', async () => {
    const { m, card } = await h.memberWithCard('virtual');
    const created = await requestReplacement(m, card.id, 'damaged');
    const picked = async () =>
      (await dueLifecycleScopes(service.ctx.db)).some(
        (s) => s.merchant_id === merchantId && s.environment === 'sandbox',
      );
    await setRow(service, 'card_replacements', created.id, { next_run_at: new Date(Date.now() + 3_600_000) });
    assert.equal(await picked(), false, 'waiting: not taking one of the bounded places');
    await setRow(service, 'card_replacements', created.id, { next_run_at: new Date(Date.now() - 1_000) });
    assert.equal(await picked(), true, 'due');
  });

  it(
    'the lifecycle ticker leaves out what no process acts on: a leased replacement, an expired card under a ' +
      'replacement in progress',
    async () => {
      // A merchant of its own: nothing else of it is due.
      const { own, m, card, created } = await ownMerchantReplacement();
      const db = service.ctx.db;
      const picked = async () => (await dueLifecycleScopes(db)).some((s) => s.merchant_id === own.merchantId);
      const setReplacement = (v: { status?: 'processing' | 'failed'; next_run_at?: Date; lease_until?: Date | null }) =>
        db.updateTable('card_replacements').set(v).where('id', '=', created.id).execute();
      // Due, but leased by a run in flight: the executor takes it only once the lease is over.
      await setReplacement({ next_run_at: new Date(Date.now() - 1_000), lease_until: new Date(Date.now() + 600_000) });
      assert.equal(await picked(), false, 'leased: not taking one of the bounded places');
      await setReplacement({ lease_until: null });
      assert.equal(await picked(), true, 'due');
      // In progress, waiting for its next run; the card past its expiry month, which the replacement ends itself.
      await setReplacement({ status: 'processing', next_run_at: new Date(Date.now() + 3_600_000) });
      await setRow(service, 'cards', card.id, { exp_year: 2020, exp_month: 1 });
      assert.equal(await picked(), false, 'nothing the expiry acts on');
      // Without it in progress, the card expires.
      await setReplacement({ status: 'failed' });
      assert.equal(await picked(), true, 'the expiry is due');
      await service.workers.tick();
      assert.equal((await own.client.cards.get(card.id, { onBehalfOf: m.external })).status, 'expired');
      assert.equal(await picked(), false);
    },
  );

  it('the lifecycle ticker takes the longest overdue scope first', async () => {
    const db = service.ctx.db;
    const overdue = async (by: number) => {
      const { own, created } = await ownMerchantReplacement();
      await setRow(service, 'card_replacements', created.id, { next_run_at: new Date(Date.now() - by) });
      return own.merchantId;
    };
    const lately = await overdue(1_000);
    const long = await overdue(86_400_000);
    const order = (await dueLifecycleScopes(db)).map((s) => s.merchant_id);
    assert.ok(
      order.includes(lately) && order.indexOf(long) < order.indexOf(lately),
      'a day overdue before a second overdue',
    );
    await service.workers.tick();
  });

  it(
    'creates only the request: crp_ id, requested, no money, the note kept to 200 characters; one in flight ' +
      'per card, also under a race',
    async () => {
      const { m, card } = await h.fundedCard(2500n);
      const before = await h.available(m, 'USDT');
      const key = randomUUID();
      const created = await client.cards.requestReplacement(
        card.id,
        { reason: 'pan_leaked', note: 'é'.repeat(250) },
        { onBehalfOf: m.external, idempotencyKey: key },
      );
      assert.match(created.id, /^crp_[0-9a-f-]{36}$/);
      assert.deepEqual(created, { id: created.id, status: 'requested' });
      // The same key and body replays; another key finds the one in flight.
      assert.deepEqual(
        await client.cards.requestReplacement(
          card.id,
          { reason: 'pan_leaked', note: 'é'.repeat(250) },
          { onBehalfOf: m.external, idempotencyKey: key },
        ),
        created,
      );
      await expectCode(requestReplacement(m, card.id, 'stolen'), 'state_invalid', 400);
      const got = await client.cards.getReplacement(created.id, { onBehalfOf: m.external });
      assert.equal(got.status, 'requested');
      assert.equal(got.note, 'é'.repeat(200));
      assert.equal(got.fees, null);
      assert.equal(got.returned_amount, '0.00');
      assert.equal(got.security, true);
      assert.equal(await h.available(m, 'USDT'), before);
      assert.equal(await h.onCard(m, card.id), 2500n);
      assert.equal(
        (await client.cards.get(card.id, { onBehalfOf: m.external })).frozen,
        true,
        'a security reason freezes the card with the request',
      );
      // By the merchant principal too; a `crp_`-less id works; another member: 404.
      assert.equal((await client.cards.getReplacement(created.id.slice(4))).id, created.id);
      await expectCode(
        client.cards.getReplacement(created.id, { onBehalfOf: (await h.member('0')).external }),
        'not_found',
        404,
      );

      // Race: two requests with different keys on a fresh card: exactly one is created.
      const card2 = await h.card(m, 'virtual');
      const results = await Promise.allSettled([0, 1, 2].map(() => requestReplacement(m, card2.id, 'damaged')));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results)
        if (r.status === 'rejected') assert.equal((r.reason as { code: string }).code, 'state_invalid');

      // However long the note, the reference truncates it: never a refusal of the request.
      const card3 = await h.card(m, 'virtual');
      const long = await client.cards.requestReplacement(
        card3.id,
        { reason: 'damaged', note: 'n'.repeat(20_000) },
        { onBehalfOf: m.external },
      );
      assert.equal((await client.cards.getReplacement(long.id, { onBehalfOf: m.external })).note, 'n'.repeat(200));
      const list = async (opts: { onBehalfOf?: string; cardId?: string }) => {
        const out = [];
        for await (const r of client.cards.listReplacements({ ...opts, limit: 1 })) out.push(r.id);
        return out;
      };
      const ofCard2 = await list({ onBehalfOf: m.external, cardId: card2.id });
      assert.equal(ofCard2.length, 1);
      assert.deepEqual(await list({ onBehalfOf: m.external, cardId: card.id }), [created.id]);
      assert.deepEqual(
        await list({ onBehalfOf: m.external }),
        [long.id, ofCard2[0], created.id],
        'newest first, across pages',
      );
      assert.deepEqual(
        await list({ cardId: card2.id.slice(4) }),
        ofCard2,
        "the merchant principal sees its members' replacements",
      );
      assert.deepEqual(await list({ onBehalfOf: (await h.member('0')).external, cardId: card2.id }), []);
      assert.deepEqual(await list({ onBehalfOf: m.external, cardId: `crd_${randomUUID()}` }), []);
      await advance();
    },
  );

  it(
    'security reason: the executor freezes, returns the balance once, charges the fees, ends the old card ' +
      'replaced and links the new one',
    async () => {
      const { m, card } = await h.fundedCard(3000n);
      await h.hold(m, card.id, 500n);
      await h.ledgerOk();
      const usdtBefore = await h.available(m, 'USDT');
      const usdBefore = await h.available(m, 'USD');
      const { id } = await requestReplacement(m, card.id, 'stolen');
      // Not yet due: an advance of 30 s does nothing.
      await advance(30);
      assert.equal((await client.cards.getReplacement(id)).status, 'requested');
      await advance(31);
      const done = await client.cards.getReplacement(id, { onBehalfOf: m.external });
      assert.equal(done.status, 'completed');
      assert.equal(done.returned_amount, '25.00');
      assert.deepEqual(done.fees, { asset: 'USDT', replacement: '3.000000', postage: '0.000000' });
      assert.match(done.new_card_id!, /^crd_/);
      assert.equal(await h.available(m, 'USD'), usdBefore + 2500n);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 500n, 'held amounts stay until they clear or are reversed');
      assert.equal(await h.available(m, 'USDT'), usdtBefore - 3_000000n);
      assert.equal(await h.frozen(m, 'USDT'), 0n);
      await h.ledgerOk();
      const old = await client.cards.get(card.id, { onBehalfOf: m.external });
      assert.equal(old.status, 'replaced');
      assert.equal(old.frozen, true);
      assert.equal(old.replaced_by, done.new_card_id);
      const fresh = await client.cards.get(done.new_card_id!, { onBehalfOf: m.external });
      assert.equal(fresh.status, 'active');
      assert.equal(fresh.replaces, card.id);
      assert.equal(fresh.frozen, false);
      assert.equal(fresh.application_id, old.application_id);
      assert.notEqual(fresh.id, old.id);
      assert.equal(await h.onCard(m, fresh.id), 0n, 'the balance never moves between cards');

      // Exactly once: a second advance and a second run of the executor change nothing.
      await advance(3600);
      assert.equal(await runReplacement(service.ctx, id), undefined);
      assert.equal(await h.available(m, 'USD'), usdBefore + 2500n);
      assert.equal(await h.available(m, 'USDT'), usdtBefore - 3_000000n);
      assert.equal(await h.entries('card.balance_return', id), 1);
      assert.equal(await h.entries('card.replacement_fee_charge', id), 1);
      await h.ledgerOk();
      // The old card is terminal: no new replacement, no closing.
      await expectCode(requestReplacement(m, card.id, 'stolen'), 'state_invalid', 400);
      await expectCode(client.cards.close(card.id, { onBehalfOf: m.external }), 'state_invalid', 400);

      const types = (await h.events(id)).map((e) => `${e.type}:${e.status_version}`);
      assert.deepEqual(types, [
        'card.replacement.requested:1',
        'card.replacement.processing:2',
        'card.replacement.completed:3',
      ]);
      assert.ok((await h.events(card.id)).some((e) => e.type === 'card.replaced' && e.status === 'replaced'));
      assert.ok((await h.events(fresh.id)).some((e) => e.type === 'card.active' && e.status_version === 1));
    },
  );

  it('physical card, security reason: replacement and postage fees; the new card waits for activation', async () => {
    const { m, card } = await h.memberWithCard('physical');
    const usdtBefore = await h.available(m, 'USDT');
    // The fees are the product's settings, changed by the operator.
    const patched = await admin(service, 'PATCH', `/admin/v1/cards/products/${card.product_id}`, {
      postage_fee: '6.5',
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.postage_fee, '6.50');
    assert.equal(patched.body.replacement_fee, '10.00');
    let done;
    try {
      const { id } = await client.cards.requestReplacement(
        card.id,
        { reason: 'damaged', note: 'cracked' },
        { onBehalfOf: m.external },
      );
      await advance();
      done = await client.cards.getReplacement(id);
    } finally {
      await admin(service, 'PATCH', `/admin/v1/cards/products/${card.product_id}`, { postage_fee: '5' });
    }
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.fees, { asset: 'USDT', replacement: '10.000000', postage: '6.500000' });
    assert.equal(await h.available(m, 'USDT'), usdtBefore - 16_500000n);
    const fresh = await client.cards.get(done.new_card_id!, { onBehalfOf: m.external });
    assert.equal(fresh.status, 'unactivated');
    assert.equal(fresh.inventory_status, 'in_production');
    assert.deepEqual(fresh.billing_address, card.billing_address);
    await h.ledgerOk();
    // The issuer knows the new card: it ships and activates with its own expiry and the sandbox PIN.
    await client.cards.sandboxShip(fresh.id);
    const expiry = `${String(fresh.exp_month).padStart(2, '0')}/${String(fresh.exp_year % 100).padStart(2, '0')}`;
    const key = randomUUID();
    let activated;
    try {
      activated = await client.cards.activate(
        fresh.id,
        { expiry, pin: '1234' },
        { onBehalfOf: m.external, idempotencyKey: key },
      );
    } catch (err) {
      if (!(err instanceof StepUpRequiredError)) throw err;
      await client.hostedScreens.sandboxComplete(err.challengeId, 'approved');
      activated = await client.cards.activate(
        fresh.id,
        { expiry, pin: '1234' },
        { onBehalfOf: m.external, idempotencyKey: key, stepUp: err.challengeId },
      );
    }
    assert.deepEqual(activated, { id: fresh.id, status: 'active' });
  });

  it('non-security reason on a card never activated: inventory voided, no fees, new card issued', async () => {
    const { m, card } = await h.memberWithCard('physical');
    const usdtBefore = await h.available(m, 'USDT');
    const { id } = await requestReplacement(m, card.id, 'not_received');
    await advance();
    const done = await client.cards.getReplacement(id);
    assert.equal(done.status, 'completed');
    assert.equal(done.security, false);
    assert.equal(done.fees, null);
    assert.equal(await h.available(m, 'USDT'), usdtBefore);
    const old = await client.cards.get(card.id, { onBehalfOf: m.external });
    assert.equal(old.status, 'replaced');
    assert.equal(old.inventory_status, 'voided');
    assert.equal(old.frozen, false);
    assert.equal((await client.cards.get(done.new_card_id!, { onBehalfOf: m.external })).status, 'unactivated');
  });

  it('a non-security request whose card got activated before the executor ran fails with nothing moved', async () => {
    const { m, card } = await h.memberWithCard('physical');
    const { id } = await requestReplacement(m, card.id, 'name_error');
    await service.ctx.db.updateTable('cards').set({ status: 'active' }).where('id', '=', card.id).execute();
    await advance();
    const failed = await client.cards.getReplacement(id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'card_activated');
    assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).inventory_status, 'in_production');
  });

  it(
    'security reason, fees the member cannot pay: failed insufficient_balance, but the card is frozen, its ' +
      'balance returned, and it authorises nothing',
    async () => {
      const m = await h.member('2');
      const product = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
      await service.ctx.db
        .updateTable('card_products')
        .set({ opening_fee: '0' })
        .where('seq', '=', product.id.slice(4))
        .execute();
      try {
        const card = await h.card(m, 'virtual');
        await h.fundCard(m, card.id, 1000n);
        await h.hold(m, card.id, 200n);
        const usdBefore = await h.available(m, 'USD');
        assert.equal(
          (await client.cards.sandboxAuthorize(card.id, { amount: '1', merchant_name: 'Corner Shop', mcc: '5411' }))
            .approved,
          true,
        );
        const { id } = await requestReplacement(m, card.id, 'stolen');
        // Stopped with the answer, not a minute later when the executor runs.
        const meanwhile = await client.cards.sandboxAuthorize(card.id, {
          amount: '1',
          merchant_name: 'Thief Shop',
          mcc: '5411',
        });
        assert.deepEqual([meanwhile.approved, meanwhile.decline_reason], [false, 'card_not_active']);
        await advance();
        const failed = await client.cards.getReplacement(id, { onBehalfOf: m.external });
        assert.equal(failed.status, 'failed');
        assert.equal(failed.failure_reason, 'insufficient_balance');
        assert.equal(failed.fees, null, 'nothing reserved');
        assert.equal(
          failed.returned_amount,
          '7.00',
          'the card balance (10.00 less 2.00 held less 1.00 authorised) back to available',
        );
        const after = await client.cards.get(card.id, { onBehalfOf: m.external });
        assert.equal(after.status, 'active', 'not replaced: the replacement failed');
        assert.equal(after.frozen, true, 'a security reason was given: the card is frozen whatever the fees');
        assert.equal(after.replaced_by, null);
        assert.equal(await h.onCard(m, card.id), 0n);
        assert.equal(await h.held(m, card.id), 300n, 'held amounts stay until they clear or are reversed');
        assert.equal(await h.available(m, 'USD'), usdBefore + 700n);
        assert.equal(await h.available(m, 'USDT'), 2_000000n, 'no fee taken');
        assert.equal(await h.frozen(m, 'USDT'), 0n);
        assert.equal(await h.entries('card.balance_return', id), 1);
        assert.equal(await h.entries('card.replacement_fee_freeze', id), 0);
        await h.ledgerOk();
        // The frozen card authorises nothing and takes no top-up.
        const declined = await client.cards.sandboxAuthorize(card.id, {
          amount: '20',
          merchant_name: 'Corner Shop',
          mcc: '5411',
        });
        assert.equal(declined.approved, false);
        assert.equal(declined.decline_reason, 'card_not_active');
        await expectCode(
          client.cards.quoteTopUp(card.id, { amount: '20' }, { onBehalfOf: m.external }),
          'state_invalid',
          400,
        );
        assert.deepEqual(
          (await h.events(id)).map((e) => `${e.type}:${e.status_version}`),
          ['card.replacement.requested:1', 'card.replacement.failed:2'],
        );
        // A second run and a second advance change nothing.
        assert.equal(await runReplacement(service.ctx, id), undefined);
        await advance(3600);
        assert.equal(await h.available(m, 'USD'), usdBefore + 700n);
        assert.equal(await h.entries('card.balance_return', id), 1);
        await h.ledgerOk();
        // Failed is not in flight: the member may request again once it can pay; the card stays frozen meanwhile.
        await client.deposits.create({
          member_id: m.external,
          asset: 'USDT',
          amount: '5',
          tx_hash: `t-${randomUUID()}`,
        });
        const again = await requestReplacement(m, card.id, 'stolen');
        await advance();
        const done = await client.cards.getReplacement(again.id);
        assert.equal(done.status, 'completed');
        assert.equal(done.returned_amount, '0.00', 'nothing left on the card to return twice');
        assert.equal(await h.available(m, 'USDT'), 4_000000n);
        assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'replaced');
        await h.ledgerOk();
      } finally {
        await service.ctx.db
          .updateTable('card_products')
          .set({ opening_fee: '500' })
          .where('seq', '=', product.id.slice(4))
          .execute();
      }
    },
  );

  it(
    'security reason: the balance is returned before the fees are taken, so it pays them when the card ' +
      'currency is a source asset',
    async () => {
      const m = await h.member('0');
      const product = (await client.cards.products()).find((p) => p.form_factor === 'virtual')!;
      const patch = (body: Record<string, unknown>) =>
        admin(service, 'PATCH', `/admin/v1/cards/products/${product.id}`, body);
      assert.equal((await patch({ opening_fee: '0' })).status, 200);
      try {
        const card = await h.card(m, 'virtual');
        await h.fundCard(m, card.id, 1000n);
        // USD after the stablecoins: nothing in USDT or USDC, so only the returned card balance can pay.
        assert.equal((await patch({ source_assets: ['USDT', 'USDC', 'USD'] })).status, 200);
        const { id } = await requestReplacement(m, card.id, 'pan_leaked');
        await advance();
        const done = await client.cards.getReplacement(id);
        assert.equal(done.status, 'completed');
        assert.equal(done.returned_amount, '10.00');
        assert.deepEqual(done.fees, { asset: 'USD', replacement: '3.00', postage: '0.00' });
        assert.equal(await h.available(m, 'USD'), 700n);
        assert.equal(await h.frozen(m, 'USD'), 0n);
        await h.ledgerOk();
      } finally {
        assert.equal((await patch({ opening_fee: '5', source_assets: ['USDT', 'USDC'] })).status, 200);
      }
    },
  );

  it(
    'issuer timeouts never refund or undo: the replacement stays processing and completes once the issuer ' + 'answers',
    async () => {
      const { m, card } = await h.fundedCard(1200n);
      const usdtBefore = await h.available(m, 'USDT');
      const usdBefore = await h.available(m, 'USD');
      const { id } = await requestReplacement(m, card.id, 'pin_locked');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'timeout' });
      await advance();
      let r = await client.cards.getReplacement(id);
      assert.equal(r.status, 'processing');
      assert.equal(await h.available(m, 'USD'), usdBefore + 1200n);
      assert.equal(await h.frozen(m, 'USDT'), 3_000000n, 'fees reserved, not charged, not released');
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).frozen, true);
      await h.ledgerOk();
      // Still no answer: a longer advance asks again (backoff), nothing is refunded.
      await advance(600);
      r = await client.cards.getReplacement(id);
      assert.equal(r.status, 'processing');
      assert.equal(await h.frozen(m, 'USDT'), 3_000000n);
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      await advance(3600);
      r = await client.cards.getReplacement(id);
      assert.equal(r.status, 'completed');
      assert.equal(await h.available(m, 'USD'), usdBefore + 1200n);
      assert.equal(await h.available(m, 'USDT'), usdtBefore - 3_000000n);
      assert.equal(await h.frozen(m, 'USDT'), 0n);
      assert.equal(await h.entries('card.balance_return', id), 1);
    },
  );

  it(
    'unknown_status: a new card answered outside our enumeration is no card: processing, nothing refunded or ' +
      'charged, one operator alert',
    async () => {
      const { m, card } = await h.fundedCard(800n);
      const { id } = await requestReplacement(m, card.id, 'pin_locked');
      const alerts = async () =>
        (await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100')).body.data.filter(
          (a: { object_id: string }) => a.object_id === card.id,
        );
      await withUpstream(client, 'card', 'unknown_status', async () => {
        await advance();
        await advance(600);
      });
      assert.equal((await client.cards.getReplacement(id)).status, 'processing');
      assert.equal(await h.frozen(m, 'USDT'), 3_000000n, 'fees reserved, not charged, not released');
      assert.equal((await alerts()).length, 1);
      // The issuer answers that request so every time: still processing, no second alert.
      await advance(3600);
      assert.equal((await client.cards.getReplacement(id)).status, 'processing');
      assert.equal((await alerts()).length, 1);
    },
  );

  it('a crash between steps resumes where it stopped: two executors at once do the work once', async () => {
    const { m, card } = await h.fundedCard(700n);
    const usdBefore = await h.available(m, 'USD');
    const { id } = await requestReplacement(m, card.id, 'expiring');
    // The issuer's 5xx after the first step: the process "stops" there.
    await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'unknown' });
    await advance();
    assert.equal((await client.cards.getReplacement(id)).status, 'processing');
    await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
    // Due again (merchant clock), then two runs race for it: the lease lets one through.
    await setRow(service, 'card_replacements', id, { next_run_at: new Date(0) });
    await Promise.all([runReplacement(service.ctx, id), runReplacement(service.ctx, id)]);
    assert.equal((await client.cards.getReplacement(id)).status, 'completed');
    assert.equal(await h.available(m, 'USD'), usdBefore + 700n);
    assert.equal(await h.entries('card.balance_return', id), 1);
    assert.equal(await h.entries('card.replacement_fee_charge', id), 1);
    assert.equal(
      (await service.ctx.db.selectFrom('cards').select('id').where('replaces', '=', card.id).execute()).length,
      1,
    );
  });

  it(
    'the issuer refuses the new card: failed, fees released, the card stays frozen (a security reason was ' +
      'given) and may be replaced again',
    async () => {
      const { m, card } = await h.fundedCard(900n);
      const usdtBefore = await h.available(m, 'USDT');
      const { id } = await requestReplacement(m, card.id, 'pan_leaked');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'reject' });
      await advance();
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      const failed = await client.cards.getReplacement(id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure_reason, 'issuer_refused');
      assert.equal(failed.returned_amount, '9.00');
      assert.equal(await h.available(m, 'USDT'), usdtBefore);
      assert.equal(await h.frozen(m, 'USDT'), 0n);
      const after = await client.cards.get(card.id, { onBehalfOf: m.external });
      assert.equal(after.status, 'active');
      assert.equal(after.frozen, true);
      assert.equal(after.replaced_by, null);
      await h.ledgerOk();
      const again = await requestReplacement(m, card.id, 'pan_leaked');
      await advance();
      assert.equal((await client.cards.getReplacement(again.id)).status, 'completed');
      assert.deepEqual(
        (await h.events(id)).map((e) => e.type),
        ['card.replacement.requested', 'card.replacement.processing', 'card.replacement.failed'],
      );
    },
  );
});
