/**
 * Card issuing I through HTTP via the SDK: products, applications (KYC gate, fee frozen → charged or
 * refunded), need_docs and the supplement (session, sandbox completion, expiry by the sandbox
 * clock), the card record, activation with step-up and the 3-failure lock ended by the clock.
 * The ledger is verified after each money step.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { dueTimedScopes } from '../src/modules/cards/queries.js';
import { admin, useTestService, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import {
  adjustCustody,
  approvedCard,
  cardProducts,
  entryKinds,
  eventsAbout,
  expiryOf,
  kycMember,
  shipping,
  withUpstream,
  latch,
  rowById,
  setRow,
} from './support/fixtures.js';

describe('cards', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({ config: { simulatorConfirmDelayMs: 0 } }, (s) => ({ service, client, merchantId } = s));
  const usdt = async (m: string) =>
    (await client.balances.list({ onBehalfOf: m })).find((b) => b.asset === 'USDT') as any;

  /** A member holding 100 USDT, its KYC approved at `kyc` (0: never reviewed): its external id. */
  const member = async (kyc = 1) => (await kycMember(service, client, { prefix: 'c', level: kyc })).external;
  const products = () => cardProducts(client);
  /** Member `m`'s application for a card of `formFactor` (fee in USDT; a physical one shipped to `shipping`). */
  async function apply(m: string, formFactor: 'virtual' | 'physical' = 'virtual') {
    const product = (await products())[formFactor];
    const shippingAddress = formFactor === 'physical' ? { shipping_address: shipping } : {};
    return client.cards.apply({ product_id: product.id, source_asset: 'USDT', ...shippingAddress }, { onBehalfOf: m });
  }
  /** A new member's physical-card application waiting for documents. */
  async function applicationNeedingDocs() {
    const m = await member();
    const app = await apply(m, 'physical');
    await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
    return { m, app };
  }
  /** A member's virtual-card application (its fee frozen), then the member's KYC rejected by the operator (level 0). */
  async function applicationOfRejectedMember() {
    const m = await member();
    const app = await apply(m);
    assert.equal((await usdt(m)).frozen, '5.000000');
    const internal = (await client.members.get(m)).id;
    const review = await admin(service, 'POST', `/admin/v1/members/${internal}/kyc-review`, { decision: 'rejected' });
    assert.equal(review.body.kyc_level, 0);
    return { m, app };
  }
  async function physicalCard(m: string) {
    const cardId = await approvedCard(client, m, { formFactor: 'physical' });
    return client.cards.get(cardId, { onBehalfOf: m });
  }
  /** Passes the step-up gate: first call refused, challenge approved by the sandbox helper, repeat with x-step-up. */
  async function activate(m: string, cardId: string, body: { expiry: string; pin: string }) {
    const key = randomUUID();
    try {
      return await client.cards.activate(cardId, body, { onBehalfOf: m, idempotencyKey: key });
    } catch (err) {
      if (!(err instanceof StepUpRequiredError)) throw err;
      await client.hostedScreens.sandboxComplete(err.challengeId, 'approved');
      return client.cards.activate(cardId, body, { onBehalfOf: m, idempotencyKey: key, stepUp: err.challengeId });
    }
  }

  it('lists the default products exactly as the reference (cpd_ ids, one virtual, one physical, USD)', async () => {
    const list = await client.cards.products();
    assert.equal(list.length, 2);
    for (const p of list) {
      assert.deepEqual(Object.keys(p).sort(), ['bin', 'card_types', 'currency', 'form_factor', 'id', 'scheme']);
      assert.match(p.id, /^cpd_[0-9]+$/);
      assert.equal(p.currency, 'USD');
    }
    assert.deepEqual(list.map((p) => p.form_factor).sort(), ['physical', 'virtual']);
  });

  it(
    'refuses below the KYC level, an unknown product, a source asset outside the list, a physical card without ' +
      'address',
    async () => {
      const { virtual, physical } = await products();
      await expectCode(
        client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: await member(0) }),
        'kyc_required',
      );
      const m = await member();
      await expectCode(
        client.cards.apply({ product_id: 'cpd_999', source_asset: 'USDT' }, { onBehalfOf: m }),
        'product_not_available',
      );
      await expectCode(
        client.cards.apply({ product_id: virtual.id, source_asset: 'BTC' }, { onBehalfOf: m }),
        'product_not_available',
      );
      await expectCode(
        client.cards.apply({ product_id: physical.id, source_asset: 'USDT' }, { onBehalfOf: m }),
        'invalid_fields',
      );
      assert.equal((await usdt(m)).available, '100.000000');
    },
  );

  it('virtual: fee frozen, approved → card active and fee charged; rejected → fee refunded', async () => {
    const { virtual } = await products();
    const m = await member();
    const app = await client.cards.apply({ product_id: virtual.id, source_asset: 'usdt' }, { onBehalfOf: m });
    assert.match(app.id, /^cap_/);
    assert.equal(app.status, 'pending');
    assert.equal(app.opening_fee, '5.000000');
    assert.equal(app.supplement, null);
    assert.equal(app.card_id, null);
    let b = await usdt(m);
    assert.equal(b.available, '95.000000');
    assert.equal(b.frozen, '5.000000');
    await expectLedgerClean(service);
    const approved = await client.cards.sandboxAdvanceApplication(app.id, 'approved');
    assert.equal(approved.status, 'approved');
    assert.match(approved.card_id!, /^crd_/);
    b = await usdt(m);
    assert.equal(b.available, '95.000000');
    assert.equal(b.frozen, '0.000000');
    await expectLedgerClean(service);
    const card = await client.cards.get(approved.card_id!, { onBehalfOf: m });
    assert.equal(card.status, 'active');
    assert.equal(card.form_factor, 'virtual');
    assert.match(card.last4, /^[0-9]{4}$/);
    assert.equal(card.billing_address_updatable, true);
    assert.equal(card.cvv_blocked, false);
    assert.equal(card.locked_until, null);
    assert.ok(!JSON.stringify(card).match(/"(pan|number|cvv)"/));
    const listed = [];
    for await (const c of client.cards.list({ onBehalfOf: m })) listed.push(c.id);
    assert.deepEqual(listed, [card.id]);
    // Virtual cards are not activated; a repeat on an active card answers 200 without step-up.
    assert.deepEqual(await client.cards.activate(card.id, { expiry: '01/30', pin: '0000' }, { onBehalfOf: m }), {
      id: card.id,
      status: 'active',
    });

    const app2 = await client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: m });
    const rejected = await client.cards.sandboxAdvanceApplication(app2.id, 'rejected');
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.card_id, null);
    b = await usdt(m);
    assert.equal(b.available, '95.000000');
    assert.equal(b.frozen, '0.000000');
    await expectLedgerClean(service);
    await expectCode(client.cards.get(card.id, { onBehalfOf: await member() }), 'not_found');
  });

  it(
    "approval after the member's KYC level fell below card_issuing: no card, application failed " +
      '(kyc_required), fee refunded',
    async () => {
      // The level drops to 0 after applying (as a profile update under re-review does).
      const { m, app } = await applicationOfRejectedMember();
      const decided = await client.cards.sandboxAdvanceApplication(app.id, 'approved');
      assert.equal(decided.status, 'failed');
      assert.equal(decided.card_id, null);
      const row = await rowById(service, 'card_applications', app.id);
      assert.equal(row.failure_reason, 'kyc_required');
      assert.equal(
        (await service.ctx.db.selectFrom('cards').select('id').where('application_id', '=', app.id).execute()).length,
        0,
      );
      const b = await usdt(m);
      assert.equal(b.available, '100.000000');
      assert.equal(b.frozen, '0.000000');
      assert.deepEqual(await entryKinds(service, app.id), ['card.fee_freeze', 'card.fee_refund']);
      assert.deepEqual(
        (await eventsAbout(service, app.id, ['type'])).map((e) => e.type),
        ['card.application.pending', 'card.application.failed'],
      );
      await expectLedgerClean(service);
      // A repeated approval changes nothing.
      await expectCode(client.cards.sandboxAdvanceApplication(app.id, 'approved'), 'state_invalid');
      // The card the issuer made for it is cancelled there (voided), once.
      await service.workers.jobs.drain();
      const voids = await service.ctx.db
        .selectFrom('upstream_sim_orders')
        .select(['operation', 'status', 'detail'])
        .where('upstream', '=', 'card')
        .where('request_id', '=', `void:${app.id}`)
        .execute();
      assert.equal(voids.length, 1);
      assert.equal(voids[0]!.operation, 'cancel');
      assert.equal(voids[0]!.status, 'succeeded');
      assert.equal((voids[0]!.detail as Record<string, string>).reason, 'voided');
    },
  );

  it(
    'a card the issuer issued for an application failed by the KYC gate, which it then refuses to cancel: an ' +
      'operator alert names it',
    async () => {
      const { app } = await applicationOfRejectedMember();
      // Refused from before the failure, so no background run of the job can get a success first.
      await withUpstream(client, 'card', 'reject', async () => {
        assert.equal((await client.cards.sandboxAdvanceApplication(app.id, 'approved')).status, 'failed');
        await service.workers.jobs.drain();
      });
      const alerts = (await admin(service, 'GET', `/admin/v1/alerts?kind=card.void_failed`)).body.data as Array<{
        object_id: string;
        message: string;
      }>;
      const alert = alerts.find((a) => a.object_id === app.id);
      assert.ok(alert, 'an alert for the application');
      assert.match(alert.message, /refused to cancel/);
    },
  );

  it(
    'a cancellation of such a card answered with a status outside our enumeration: not taken as done, one ' +
      'upstream.unknown_status alert',
    async () => {
      const { app } = await applicationOfRejectedMember();
      await withUpstream(client, 'card', 'unknown_status', async () => {
        assert.equal((await client.cards.sandboxAdvanceApplication(app.id, 'approved')).status, 'failed');
        await service.workers.jobs.drain(2_000);
      });
      const alerts = (await admin(service, 'GET', `/admin/v1/alerts?kind=upstream.unknown_status`)).body.data as Array<{
        object: string;
        object_id: string;
      }>;
      assert.equal(
        alerts.filter((a) => a.object === 'card_application' && a.object_id === app.id).length,
        1,
        'one alert for the application',
      );
      const job = await service.ctx.db
        .selectFrom('jobs')
        .select('status')
        .where('kind', '=', 'card.void_issued')
        .where('dedupe_key', '=', `card.void_issued:${app.id}`)
        .executeTakeFirst();
      assert.ok(job, 'the cancellation is still to be done (retried)');
    },
  );

  it('need_docs: supplement session, sandbox submission, then approval of a physical card (unactivated)', async () => {
    const m = await member();
    const app = await apply(m, 'physical');
    assert.equal(app.opening_fee, '15.000000');
    await expectCode(client.cards.createSupplementSession(app.id, { onBehalfOf: m }), 'not_found');
    const nd = await client.cards.sandboxAdvanceApplication(app.id, 'need_docs');
    assert.equal(nd.status, 'need_docs');
    assert.equal(nd.supplement!.status, 'pending');
    await expectCode(client.cards.createSupplementSession(app.id, { onBehalfOf: await member() }), 'not_found');
    const ticket = await client.cards.createSupplementSession(app.id.replace('cap_', ''), { onBehalfOf: m });
    assert.match(ticket.id, /^kyc_[0-9a-f]{32}$/);
    assert.ok(ticket.hosted_url.endsWith(`/hosted/${ticket.id}`));
    await client.hostedScreens.sandboxComplete(ticket.id, 'submitted');
    const after = await client.cards.getApplication(app.id, { onBehalfOf: m });
    assert.equal(after.status, 'pending');
    assert.equal(after.supplement!.status, 'submitted');
    await expectCode(client.cards.createSupplementSession(app.id, { onBehalfOf: m }), 'not_found');
    const approved = await client.cards.sandboxAdvanceApplication(app.id, 'approved');
    const card = await client.cards.get(approved.card_id!, { onBehalfOf: m });
    assert.equal(card.status, 'unactivated');
    assert.equal(card.inventory_status, 'in_production');
    assert.deepEqual(card.billing_address, shipping);
    assert.equal((await usdt(m)).available, '85.000000');
    await expectLedgerClean(service);
  });

  it('supplement expiry (sandbox clock) fails the application and refunds the fee; no card', async () => {
    const { m, app } = await applicationNeedingDocs();
    assert.equal((await usdt(m)).frozen, '15.000000');
    await client.sandbox.advanceClock(7 * 24 * 3600 + 1);
    const failed = await client.cards.getApplication(app.id, { onBehalfOf: m });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.card_id, null);
    const b = await usdt(m);
    assert.equal(b.available, '100.000000');
    assert.equal(b.frozen, '0.000000');
    await expectLedgerClean(service);
    await expectCode(client.cards.sandboxAdvanceApplication(app.id, 'approved'), 'state_invalid');
  });

  it('a supplement work order past its expiry takes no submission, even before the expiry has run', async () => {
    const { m, app } = await applicationNeedingDocs();
    const ticket = await client.cards.createSupplementSession(app.id, { onBehalfOf: m });
    // The work order's time is over; the expiry process (a worker) has not run yet.
    await setRow(service, 'card_applications', app.id, { supplement_expires_at: new Date(Date.now() - 1_000) });
    await expectCode(client.cards.createSupplementSession(app.id, { onBehalfOf: m }), 'not_found');
    await expectCode(client.hostedScreens.sandboxComplete(ticket.id, 'submitted'), 'state_invalid');
    const page = await fetch(ticket.hosted_url.replace(/^https?:\/\/[^/]+/, service.publicUrl), {
      headers: { host: new URL(ticket.hosted_url).host },
    });
    assert.doesNotMatch(await page.text(), /Send photos/, 'the screen no longer offers the form');
    const still = await client.cards.getApplication(app.id, { onBehalfOf: m });
    assert.equal(still.status, 'need_docs', 'left to the expiry, which fails it and refunds the fee');
    assert.equal(still.supplement!.status, 'pending');
    assert.equal((await usdt(m)).frozen, '15.000000');
    // The expiry then runs (here by an advance of the clock): failed, the fee refunded.
    await client.sandbox.advanceClock(1);
    assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'failed');
    assert.equal((await usdt(m)).frozen, '0.000000');
  });

  it('the card ticker picks a scope when a supplement is due on its clock, not while it waits', async () => {
    const { m, app } = await applicationNeedingDocs();
    const merchantId = (
      await service.ctx.db
        .selectFrom('card_applications')
        .select('merchant_id')
        .where('id', '=', app.id)
        .executeTakeFirstOrThrow()
    ).merchant_id;
    const picked = async () => (await dueTimedScopes(service.ctx.db)).some((s) => s.merchant_id === merchantId);
    assert.equal(await picked(), false, 'a pending work order takes none of the bounded places');
    await setRow(service, 'card_applications', app.id, { supplement_expires_at: new Date(Date.now() - 1_000) });
    assert.equal(await picked(), true, 'due');
    await client.sandbox.advanceClock(1);
    assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'failed');
  });

  it('activation: not shipped refused; step-up of another card refused; right PIN and expiry activate', async () => {
    const m = await member();
    const card = await physicalCard(m);
    const other = await physicalCard(m);
    await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '1234' }), 'state_invalid');
    await client.cards.sandboxShip(card.id);
    await client.cards.sandboxShip(other.id);
    // A challenge completed for the other card does not authorise this one.
    const key = randomUUID();
    let challenge = '';
    try {
      await client.cards.activate(other.id, { expiry: expiryOf(other), pin: '1234' }, { onBehalfOf: m });
    } catch (err) {
      assert.ok(err instanceof StepUpRequiredError);
      challenge = err.challengeId;
    }
    await client.hostedScreens.sandboxComplete(challenge, 'approved');
    await expectCode(
      client.cards.activate(
        card.id,
        { expiry: expiryOf(card), pin: '1234' },
        { onBehalfOf: m, idempotencyKey: key, stepUp: challenge },
      ),
      'step_up_required',
    );
    const done = await activate(m, card.id, { expiry: expiryOf(card), pin: '1234' });
    assert.deepEqual(done, { id: card.id, status: 'active' });
    const after = await client.cards.get(card.id, { onBehalfOf: m });
    assert.equal(after.status, 'active');
    assert.equal(after.inventory_status, 'bound');
    // The PIN is not in the idempotency record, not even as a plain hash of the body.
    const rows = await service.ctx.db.selectFrom('idempotency_keys').select(['endpoint', 'response_body']).execute();
    const activations = rows.filter((r) => r.endpoint.includes('/activate'));
    assert.ok(activations.length >= 2, `${activations.length} activation records`);
    // No record has a field named pin; no activation's record has 1234 as a JSON value (a card's
    // random last4 may be "1234" in another record, and a bare 1234 may occur inside a random id).
    assert.ok(rows.every((r) => !/"pin"/.test(r.response_body)));
    assert.ok(activations.every((r) => !/"1234"/.test(r.response_body)));
  });

  it(
    'three wrong PINs lock the card for 24 hours; network faults are not counted; the sandbox clock ends the ' + 'lock',
    async () => {
      const m = await member();
      const card = await physicalCard(m);
      await client.cards.sandboxShip(card.id);
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '0000' }), 'invalid_request');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'unknown' });
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '0000' }), 'upstream_error');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      await expectCode(activate(m, card.id, { expiry: '01/20', pin: '1234' }), 'invalid_request');
      await assert.rejects(activate(m, card.id, { expiry: expiryOf(card), pin: '9999' }), (err: any) => {
        assert.equal(err.code, 'state_invalid');
        assert.match(
          String(err.body?.locked_until ?? err.raw?.locked_until ?? err.details?.locked_until ?? JSON.stringify(err)),
          /\d{4}-\d{2}-\d{2}T/,
        );
        return true;
      });
      const locked = await client.cards.get(card.id, { onBehalfOf: m });
      assert.ok(locked.locked_until);
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '1234' }), 'state_invalid');
      await client.sandbox.advanceClock(24 * 3600 + 1);
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m })).locked_until, null);
      assert.deepEqual(await activate(m, card.id, { expiry: expiryOf(card), pin: '1234' }), {
        id: card.id,
        status: 'active',
      });
    },
  );

  it(
    'a counted failure whose answer lands after the lock keeps the card locked: parallel wrong PINs never lift ' + 'it',
    async () => {
      const m = await member();
      const card = await physicalCard(m);
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      await client.cards.sandboxShip(card.id);
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '0000' }), 'invalid_request');
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '0001' }), 'invalid_request');
      // Two more attempts, each with its own approved challenge, both at the issuer at once: the
      // first answer applied is the third failure (the lock), the second lands on a locked card.
      const ready: Array<{ key: string; body: { expiry: string; pin: string }; challenge: string }> = [];
      for (const pin of ['0002', '0003']) {
        const key = randomUUID();
        const body = { expiry: expiryOf(card), pin };
        const challenge = await client.cards.activate(card.id, body, { onBehalfOf: m, idempotencyKey: key }).then(
          () => assert.fail('step-up expected'),
          (err: unknown) => (err as StepUpRequiredError).challengeId,
        );
        await client.hostedScreens.sandboxComplete(challenge, 'approved');
        ready.push({ key, body, challenge });
      }
      const upstream = service.ctx.upstreams.card as unknown as { activate: (...args: unknown[]) => Promise<unknown> };
      const original = upstream.activate;
      let inside = 0;
      const bothInside = latch();
      const gate = latch();
      upstream.activate = async (...args: unknown[]) => {
        const out = await original.apply(upstream, args);
        if (++inside === 2) bothInside.open();
        await gate.passed;
        return out;
      };
      try {
        const calls = ready.map((r) =>
          client.cards.activate(card.id, r.body, { onBehalfOf: m, idempotencyKey: r.key, stepUp: r.challenge }).then(
            () => assert.fail('a wrong PIN activated the card'),
            (err: { code?: string; body?: { locked_until?: string } }) => err,
          ),
        );
        await bothInside.passed;
        gate.open();
        const answers = await Promise.all(calls);
        for (const err of answers) {
          assert.equal(err.code, 'state_invalid', 'both answers report the lock');
          assert.match(String(err.body?.locked_until), /^\d{4}-\d{2}-\d{2}T/);
        }
      } finally {
        upstream.activate = original;
        gate.open();
      }
      const after = await client.cards.get(card.id, { onBehalfOf: m });
      assert.ok(after.locked_until, 'still locked');
      assert.equal(after.status, 'unactivated');
      // The right PIN is refused until the 24 hours have passed.
      await expectCode(activate(m, card.id, { expiry: expiryOf(card), pin: '1234' }), 'state_invalid');
    },
  );

  it('an activation whose card was closed while the issuer was asked does not bring it back', async () => {
    const m = await member();
    const card = await physicalCard(m);
    await client.cards.sandboxShip(card.id);
    // The issuer answers, then waits: the close lands inside the activation's issuer call.
    const upstream = service.ctx.upstreams.card as unknown as { activate: (...args: unknown[]) => Promise<unknown> };
    const original = upstream.activate;
    const inFlight = latch();
    const gate = latch();
    upstream.activate = async (...args: unknown[]) => {
      const out = await original.apply(upstream, args);
      inFlight.open();
      await gate.passed;
      return out;
    };
    try {
      const key = randomUUID();
      const body = { expiry: expiryOf(card), pin: '1234' };
      const challenge = await client.cards.activate(card.id, body, { onBehalfOf: m, idempotencyKey: key }).then(
        () => assert.fail('step-up expected'),
        (err: unknown) => (err as StepUpRequiredError).challengeId,
      );
      await client.hostedScreens.sandboxComplete(challenge, 'approved');
      const activation = client.cards.activate(card.id, body, {
        onBehalfOf: m,
        idempotencyKey: key,
        stepUp: challenge,
      });
      await inFlight.passed;
      await client.cards.close(card.id, { onBehalfOf: m });
      const closedAs = (await client.cards.get(card.id, { onBehalfOf: m })).status;
      assert.ok(['closing', 'closed'].includes(closedAs), closedAs);
      gate.open();
      await expectCode(activation, 'state_invalid', 400);
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m })).status, closedAs, 'the close stands');
      const events = await service.ctx.db
        .selectFrom('events')
        .select('type')
        .where('object_id', '=', card.id)
        .execute();
      assert.ok(!events.some((e) => e.type === 'card.active'), 'no card.active event');
      await expectLedgerClean(service);
    } finally {
      upstream.activate = original;
      gate.open();
    }
  });

  it(
    'the opening fee is charged whatever custody the merchant holds: ' + 'it leaves through settlement clearing',
    async () => {
      const m = await member();
      const app = await apply(m);
      // The merchant settles every USDT it holds with the platform (its members' coins now held there).
      const custodyOf = async () => (await client.merchant.balances()).find((b) => b.asset === 'USDT')!.custody;
      const adjust = (direction: 'increase' | 'decrease', amount: string) =>
        adjustCustody(service, merchantId, direction, amount, 'settled with the platform');
      const held = await custodyOf();
      assert.equal((await adjust('decrease', held)).status, 201);
      try {
        const approved = await client.cards.sandboxAdvanceApplication(app.id, 'approved');
        assert.equal(approved.status, 'approved');
        assert.equal((await client.cards.get(approved.card_id!, { onBehalfOf: m })).status, 'active');
        const b = await usdt(m);
        assert.deepEqual([b.available, b.frozen], ['95.000000', '0.000000']);
        assert.equal(await custodyOf(), '0.000000', 'custody untouched');
        await expectLedgerClean(service);
      } finally {
        assert.equal((await adjust('increase', held)).status, 201);
      }
    },
  );
});
