/**
 * The card area's unknown outcomes through HTTP via the SDK (docs/cards.md, "Reconciliation"):
 * applications whose submission timed out or met a 5xx, resolved by reconciliation as the sandbox
 * clock passes (approved → card opened and fee charged; rejected → fee refunded; need_docs →
 * supplement; never received → submitted again; no answer → still pending, fee frozen);
 * merchant-rule sets left unconfirmed after a 502 with no retry; and the retry of a card
 * activation after a 504/502 with the step-up challenge it already consumed. The ledger is
 * verified after each money step.
 */
import { afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { StepUpRequiredError, type MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import type { Database } from '../src/db/schema.js';
import { raiseSandboxOffset } from '../src/platform/queries/clock.js';
import { dueReconcileScopes } from '../src/modules/cards/queries.js';
import type { ApplicationDecision } from '../src/upstreams/card/port.js';
import { newMerchantClient, useTestService, expectLedgerClean } from './support/service.js';
import { expectCode } from './support/expect.js';
import { resumeVerdict, type StepUpBinding } from '../src/modules/step-up/rules.js';
import {
  approvedCard,
  cardProducts,
  expiryOf,
  kycMember,
  setRow,
  unknownStatusAlerts,
  withUpstream,
} from './support/fixtures.js';

describe('card reconciliation rules (pure)', () => {
  it('a used challenge resumes only its own binding, and only once used', () => {
    const binding: StepUpBinding = {
      merchantId: 'mer_1',
      environment: 'sandbox',
      memberId: 'mem_1',
      action: 'card.activate',
      objectRef: 'o1',
    };
    const ticket = {
      merchant_id: 'mer_1',
      environment: 'sandbox' as const,
      member_id: 'mem_1',
      purpose: 'step_up' as const,
      action: 'card.activate',
      object_ref: 'o1',
      status: 'used' as const,
      outcome: 'approved',
    };
    assert.deepEqual(resumeVerdict(ticket, binding), { pass: true });
    assert.deepEqual(resumeVerdict({ ...ticket, status: 'completed' as never }, binding), {
      pass: false,
      reason: 'not_completed',
    });
    assert.deepEqual(resumeVerdict({ ...ticket, outcome: 'declined' }, binding), {
      pass: false,
      reason: 'not_completed',
    });
    assert.deepEqual(resumeVerdict({ ...ticket, object_ref: 'o2' }, binding), { pass: false, reason: 'other_object' });
    assert.deepEqual(resumeVerdict({ ...ticket, member_id: 'mem_2' }, binding), {
      pass: false,
      reason: 'other_member',
    });
    assert.deepEqual(resumeVerdict({ ...ticket, merchant_id: 'mer_2' }, binding), {
      pass: false,
      reason: 'other_merchant',
    });
    assert.deepEqual(resumeVerdict(undefined, binding), { pass: false, reason: 'unknown' });
  });
});

describe('card reconciliation', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  let merchantId: string;
  useTestService({ config: { simulatorConfirmDelayMs: 0 }, merchant: false }, (s) => ({ service } = s));
  // Every test ends on a ledger that verifies.
  afterEach(() => expectLedgerClean(service));
  /** A merchant per test: each has its own sandbox clock and its own injected behaviours. */
  const freshMerchant = async () => {
    ({ client, merchantId } = await newMerchantClient(service));
  };
  const usdt = async (m: string) => {
    const b = (await client.balances.list({ onBehalfOf: m })).find((x) => x.asset === 'USDT') as {
      available: string;
      frozen: string;
    };
    return [b.available, b.frozen];
  };
  /** Runs `f` with the card issuer answering `behavior`, then back to `success`. */
  const withIssuer = <T>(behavior: string, f: () => Promise<T>) => withUpstream(client, 'card', behavior, f);
  /** The issuer decides on its own, without telling us (the simulator's books only). */
  const issuerDecides = (applicationId: string, decision: ApplicationDecision) =>
    service.ctx.upstreams.card.sandboxDecide!({ merchantId, environment: 'sandbox' }, applicationId, decision);
  /** A member at KYC level 1 holding 100 USDT: its external id. */
  const member = async (c = client) => (await kycMember(service, c, { prefix: 'r' })).external;
  const products = () => cardProducts(client);
  /** Sets member `m`'s card's merchant rules; the issuer's answer is lost (502). */
  const rulesLost = (
    m: string,
    cardId: string,
    body: Parameters<MerchantWalletClient['cards']['setMerchantRules']>[1],
  ) => expectCode(client.cards.setMerchantRules(cardId, body, { onBehalfOf: m }), 'upstream_error', 502);
  /** Columns of an application's row. */
  const applicationRow = <C extends keyof Database['card_applications'] & string>(id: string, columns: C[]) =>
    service.ctx.db.selectFrom('card_applications').select(columns).where('id', '=', id).executeTakeFirstOrThrow();
  /** Columns of a card's row. */
  const cardRow = <C extends keyof Database['cards'] & string>(id: string, columns: C[]) =>
    service.ctx.db.selectFrom('cards').select(columns).where('id', '=', id).executeTakeFirstOrThrow();
  /**
   * An application whose submission outcome is unknown: the issuer answered `behavior` (timeout, 5xx or a status
   * outside our enumeration).
   */
  async function unknownApplication(m: string, behavior: 'timeout' | 'unknown' | 'unknown_status') {
    const { virtual } = await products();
    const app = await withIssuer(behavior, () =>
      client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: m }),
    );
    assert.equal(app.status, 'pending');
    assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
    await expectLedgerClean(service);
    return app;
  }

  describe('applications whose submission outcome is unknown', () => {
    before(freshMerchant);
    /**
     * A member's application whose submission timed out while the issuer decided `decision` on its own: nothing
     * moves before reconciliation asks; `done` is the application after its first pass (a minute on).
     */
    async function timedOutWhileDecided(decision: ApplicationDecision) {
      const m = await member();
      const app = await unknownApplication(m, 'timeout');
      await issuerDecides(app.id, decision);
      assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'pending');
      await client.sandbox.advanceClock(60);
      return { m, app, done: await client.cards.getApplication(app.id, { onBehalfOf: m }) };
    }

    it('timeout, the issuer approved meanwhile: reconciliation opens the card and charges the fee', async () => {
      const { m, app, done } = await timedOutWhileDecided('approved');
      assert.equal(done.status, 'approved');
      assert.match(done.card_id!, /^crd_/);
      const card = await client.cards.get(done.card_id!, { onBehalfOf: m });
      assert.equal(card.status, 'active');
      assert.deepEqual(await usdt(m), ['95.000000', '0.000000']);
      await expectLedgerClean(service);
      const kinds = (
        await service.ctx.db.selectFrom('journal_entries').select('kind').where('reference_id', '=', app.id).execute()
      )
        .map((r) => r.kind)
        .sort();
      assert.deepEqual(kinds, ['card.fee_charge', 'card.fee_freeze']);
      // Later passes change nothing (the card is opened once, the fee charged once).
      await client.sandbox.advanceClock(3600);
      assert.equal(
        (await service.ctx.db.selectFrom('cards').select('id').where('application_id', '=', app.id).execute()).length,
        1,
      );
      assert.deepEqual(await usdt(m), ['95.000000', '0.000000']);
    });

    it('timeout, the issuer rejected it: the fee is refunded', async () => {
      const { m, done } = await timedOutWhileDecided('rejected');
      assert.equal(done.status, 'rejected');
      assert.equal(done.card_id, null);
      assert.deepEqual(await usdt(m), ['100.000000', '0.000000']);
    });

    it('timeout, the issuer needs documents: a supplement work order, the fee still frozen', async () => {
      const { m, app, done } = await timedOutWhileDecided('need_docs');
      assert.equal(done.status, 'need_docs');
      assert.equal(done.supplement!.status, 'pending');
      assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
      // The member sends the supplement: back to review, and no further query sends it back to need_docs.
      const ticket = await client.cards.createSupplementSession(app.id, { onBehalfOf: m });
      await client.hostedScreens.sandboxComplete(ticket.id, 'submitted');
      await client.sandbox.advanceClock(3600);
      const back = await client.cards.getApplication(app.id, { onBehalfOf: m });
      assert.deepEqual([back.status, back.supplement!.status], ['pending', 'submitted']);
      assert.equal((await client.cards.sandboxAdvanceApplication(app.id, 'approved')).status, 'approved');
      assert.deepEqual(await usdt(m), ['95.000000', '0.000000']);
    });

    it(
      'timeout, the issuer is reviewing: still pending with the fee frozen; ' + 'its decision then arrives as usual',
      async () => {
        const m = await member();
        const app = await unknownApplication(m, 'timeout');
        await client.sandbox.advanceClock(60);
        assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'pending');
        const row = await applicationRow(app.id, ['upstream_outcome', 'next_check_at']);
        assert.deepEqual(row, { upstream_outcome: 'accepted', next_check_at: null });
        assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
        assert.equal((await client.cards.sandboxAdvanceApplication(app.id, 'approved')).status, 'approved');
        assert.deepEqual(await usdt(m), ['95.000000', '0.000000']);
      },
    );

    it('5xx, never received: no refund while the issuer keeps failing; submitted again once it answers', async () => {
      const m = await member();
      const app = await unknownApplication(m, 'unknown');
      await withIssuer('unknown', async () => {
        // (Less than the preset's hour: advancing past it ends the preset.)
        await client.sandbox.advanceClock(1800);
        assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'pending');
        assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
      });
      await expectLedgerClean(service);
      // The issuer answers again: the re-submission (same request id) arrives; the application waits for its decision.
      await client.sandbox.advanceClock(3600);
      const row = await applicationRow(app.id, ['status', 'upstream_outcome']);
      assert.deepEqual(row, { status: 'pending', upstream_outcome: 'accepted' });
      assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
      const approved = await client.cards.sandboxAdvanceApplication(app.id, 'approved');
      assert.equal(approved.status, 'approved');
      assert.deepEqual(await usdt(m), ['95.000000', '0.000000']);
    });

    /** The open `upstream.unknown_status` alerts about an object. */
    const alertsOf = (objectId: string) => unknownStatusAlerts(service, objectId);

    it(
      'unknown_status at submission: never taken as received; pending with the fee frozen, one operator alert, ' +
        'kept under reconciliation',
      async () => {
        const m = await member();
        const app = await unknownApplication(m, 'unknown_status');
        const alerts = await alertsOf(app.id);
        assert.equal(alerts.length, 1);
        assert.equal(alerts[0].object, 'card_application');
        const row = await applicationRow(app.id, ['upstream_outcome', 'next_check_at']);
        assert.equal(row.upstream_outcome, 'unknown', 'not taken as received');
        assert.notEqual(row.next_check_at, null, 'reconciliation keeps asking');
        // The issuer keeps answering the sentinel: reconciliation changes nothing and raises no second alert.
        await client.sandbox.advanceClock(600);
        assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'pending');
        assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
        assert.equal((await alertsOf(app.id)).length, 1);
        await expectLedgerClean(service);
        // The issuer's decision still settles it.
        assert.equal((await client.cards.sandboxAdvanceApplication(app.id, 'rejected')).status, 'rejected');
        assert.deepEqual(await usdt(m), ['100.000000', '0.000000']);
      },
    );

    it(
      'unknown_status on a re-submission (first submission never received): not received; one alert; the fee ' +
        'stays frozen',
      async () => {
        const m = await member();
        const app = await unknownApplication(m, 'unknown');
        await withIssuer('unknown_status', async () => {
          await client.sandbox.advanceClock(1800);
        });
        const row = await applicationRow(app.id, ['status', 'upstream_outcome']);
        assert.deepEqual(row, { status: 'pending', upstream_outcome: 'unknown' });
        assert.deepEqual(await usdt(m), ['95.000000', '5.000000']);
        assert.equal((await alertsOf(app.id)).length, 1);
        await client.sandbox.advanceClock(600);
        assert.equal((await alertsOf(app.id)).length, 1);
      },
    );

    it('the background ticker resolves it on its own as well (real time, no clock advance)', async () => {
      const m = await member();
      const app = await unknownApplication(m, 'timeout');
      await issuerDecides(app.id, 'rejected');
      // Due now on the merchant's clock (as if its first check time had come).
      await setRow(service, 'card_applications', app.id, { next_check_at: new Date(Date.now() - 1000) });
      await service.workers.tick();
      assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'rejected');
      assert.deepEqual(await usdt(m), ['100.000000', '0.000000']);
    });
  });

  describe("the ticker's choice of scopes", () => {
    before(freshMerchant);
    const picked = async (id = merchantId) =>
      (await dueReconcileScopes(service.ctx.db)).findIndex((s) => s.merchant_id === id && s.environment === 'sandbox');
    const checkAt = (table: 'card_applications' | 'card_merchant_rules', key: 'id' | 'card_id', id: string, at: Date) =>
      service.ctx.db.updateTable(table).set({ next_check_at: at }).where(key, '=', id).execute();

    it('an application: its scope is picked when its check is due on its own clock, not while it waits', async () => {
      const m = await member();
      const app = await unknownApplication(m, 'timeout');
      await checkAt('card_applications', 'id', app.id, new Date(Date.now() + 3_600_000));
      assert.equal(await picked(), -1, 'waiting: not taking one of the bounded places');
      // The merchant's own clock passes it (the offset alone, no process run): due.
      await raiseSandboxOffset(service.ctx.db, merchantId, 7_200_000n);
      assert.ok((await picked()) >= 0, 'due on its clock');
      await issuerDecides(app.id, 'rejected');
      await service.workers.tick();
      assert.equal((await client.cards.getApplication(app.id, { onBehalfOf: m })).status, 'rejected');
      assert.equal(await picked(), -1, 'nothing left due');
    });

    it('a rule set: its scope is picked only once its check is due; the longest overdue scope first', async () => {
      const m = await member();
      const cardId = await approvedCard(client, m);
      await withIssuer('unknown', () => rulesLost(m, cardId, { rule_type: 'black', mcc_list: ['7995'] }));
      assert.equal(await picked(), -1, 'unconfirmed, its first check not due yet');
      const now = await service.ctx.clock.now(service.ctx.db, { merchantId, environment: 'sandbox' });
      await checkAt('card_merchant_rules', 'card_id', cardId, new Date(now.getTime() - 1_000));
      assert.ok((await picked()) >= 0, 'due');
      // Another merchant's check, overdue by longer: it goes first.
      const other = await newMerchantClient(service);
      const ext = await member(other.client);
      const { virtual } = await products();
      const otherApp = await withUpstream(other.client, 'card', 'timeout', () =>
        other.client.cards.apply({ product_id: virtual.id, source_asset: 'USDT' }, { onBehalfOf: ext }),
      );
      await checkAt('card_applications', 'id', otherApp.id, new Date(Date.now() - 3_600_000));
      assert.ok(
        (await picked(other.merchantId)) >= 0 && (await picked(other.merchantId)) < (await picked()),
        'the longest overdue first',
      );
      // Asked (the issuer never received it, within the grace: asked again later): neither scope is due any more.
      await service.workers.tick();
      const rules = await service.ctx.db
        .selectFrom('card_merchant_rules')
        .select('check_count')
        .where('card_id', '=', cardId)
        .executeTakeFirstOrThrow();
      assert.equal(rules.check_count, 1);
      assert.deepEqual([await picked(), await picked(other.merchantId)], [-1, -1]);
    });
  });

  describe('merchant rules left unconfirmed after a 502', () => {
    before(freshMerchant);

    async function virtualCard() {
      const m = await member();
      return { m, id: await approvedCard(client, m) };
    }
    /**
     * One card for the four tests (made when the first asks, so each also runs alone): each sets
     * the rules it then reads and waits for reconciliation to settle them. The first reads a card
     * whose rules were never confirmed (synced_at null): it runs first. The last makes the issuer
     * refuse every change of the card: nothing runs after it.
     */
    let sharedCard: ReturnType<typeof virtualCard> | undefined;
    const shared = () => (sharedCard ??= virtualCard());

    it(
      '5xx (never received), no retry: pushed again by reconciliation and synced; ' + 'no answer keeps it unconfirmed',
      async () => {
        const { m, id } = await shared();
        const body = { rule_type: 'white' as const, merchant_names: ['Corner Shop'], mcc_list: ['5411'] };
        await withIssuer('unknown', async () => {
          await rulesLost(m, id, body);
          await client.sandbox.advanceClock(600);
          const still = await client.cards.getMerchantRules(id, { onBehalfOf: m });
          assert.deepEqual([still.rule_type, still.synced, still.synced_at], ['white', false, null]);
        });
        await client.sandbox.advanceClock(600);
        const synced = await client.cards.getMerchantRules(id, { onBehalfOf: m });
        assert.equal(synced.synced, true);
        assert.match(synced.synced_at!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        assert.deepEqual(
          [synced.rule_type, synced.merchant_names, synced.mcc_list],
          ['white', ['Corner Shop'], ['5411']],
        );
      },
    );

    it(
      'timeout (the issuer has it), abandoned for a new key that also timed out: ' + 'the latest set is confirmed',
      async () => {
        const { m, id } = await shared();
        await withIssuer('timeout', async () => {
          await rulesLost(m, id, { rule_type: 'black', mcc_list: ['7995'] });
          await rulesLost(m, id, { rule_type: 'black', mcc_list: ['7995', '7801'] });
        });
        assert.equal((await client.cards.getMerchantRules(id, { onBehalfOf: m })).synced, false);
        await client.sandbox.advanceClock(61);
        const synced = await client.cards.getMerchantRules(id, { onBehalfOf: m });
        assert.deepEqual([synced.rule_type, synced.mcc_list, synced.synced], ['black', ['7995', '7801'], true]);
        assert.ok(synced.synced_at);
      },
    );

    it('a removal left unconfirmed is confirmed too', async () => {
      const { m, id } = await shared();
      const first = await client.cards.setMerchantRules(
        id,
        { rule_type: 'black', mcc_list: ['7995'] },
        { onBehalfOf: m },
      );
      await withIssuer('timeout', () =>
        expectCode(client.cards.deleteMerchantRules(id, { onBehalfOf: m }), 'upstream_error', 502),
      );
      await client.sandbox.advanceClock(61);
      const after = await client.cards.getMerchantRules(id, { onBehalfOf: m });
      assert.deepEqual([after.rule_type, after.mcc_list, after.synced], [null, [], true]);
      assert.ok(after.synced_at! > first.synced_at!);
    });

    it('the issuer refused the unconfirmed set: the confirmed set comes back', async () => {
      const { m, id } = await shared();
      const confirmed = await client.cards.setMerchantRules(
        id,
        { rule_type: 'black', mcc_list: ['7995'] },
        { onBehalfOf: m },
      );
      // Sandbox test data: the simulated issuer refuses every change of a card whose reference starts SIM-REFUSE.
      await setRow(service, 'cards', id, { upstream_ref: `SIM-REFUSE-${randomUUID()}` });
      await withIssuer('timeout', () => rulesLost(m, id, { rule_type: 'white', mcc_list: ['5411'] }));
      assert.equal((await client.cards.getMerchantRules(id, { onBehalfOf: m })).rule_type, 'white');
      await client.sandbox.advanceClock(61);
      const back = await client.cards.getMerchantRules(id, { onBehalfOf: m });
      assert.deepEqual(
        [back.rule_type, back.mcc_list, back.synced, back.synced_at],
        ['black', ['7995'], true, confirmed.synced_at],
      );
    });
  });

  describe('activation retried after an unknown outcome', () => {
    before(freshMerchant);

    async function shippedCard() {
      const m = await member();
      const cardId = await approvedCard(client, m, { formFactor: 'physical' });
      await client.cards.sandboxShip(cardId);
      return { m, card: await client.cards.get(cardId, { onBehalfOf: m }) };
    }
    /** The first call of a key: step-up required; the member completes the challenge. */
    async function approvedChallenge(m: string, cardId: string, body: { expiry: string; pin: string }, key: string) {
      try {
        await client.cards.activate(cardId, body, { onBehalfOf: m, idempotencyKey: key });
        assert.fail('step-up expected');
      } catch (err) {
        assert.ok(err instanceof StepUpRequiredError);
        await client.hostedScreens.sandboxComplete(err.challengeId, 'approved');
        return err.challengeId;
      }
    }
    /**
     * A shipped card whose activation, resumed with the member's approved step-up challenge, met `behavior` at the
     * issuer (a timeout: 504; a 5xx: 502). `retry` sends that same request again: same key, body and challenge.
     */
    async function lostActivation(behavior: 'timeout' | 'unknown', pin = '1234') {
      const { m, card } = await shippedCard();
      const body = { expiry: expiryOf(card), pin };
      const key = randomUUID();
      const challenge = await approvedChallenge(m, card.id, body, key);
      const retry = () =>
        client.cards.activate(card.id, body, { onBehalfOf: m, idempotencyKey: key, stepUp: challenge });
      await withIssuer(behavior, () =>
        behavior === 'timeout'
          ? expectCode(retry(), 'upstream_timeout', 504)
          : expectCode(retry(), 'upstream_error', 502),
      );
      return { m, card, body, key, challenge, retry };
    }
    const challengesOf = async (cardMember: string) => {
      const m = await service.ctx.db
        .selectFrom('members')
        .select('id')
        .where('external_member_id', '=', cardMember)
        .executeTakeFirstOrThrow();
      return (
        await service.ctx.db
          .selectFrom('hosted_tickets')
          .select('id')
          .where('member_id', '=', m.id)
          .where('purpose', '=', 'step_up')
          .execute()
      ).length;
    };

    it(
      '504 (the issuer activated it): the same request with the same challenge is answered 200, ' + 'no new step-up',
      async () => {
        const { m, card, retry } = await lostActivation('timeout');
        assert.equal((await client.cards.get(card.id, { onBehalfOf: m })).status, 'unactivated');
        const issued = await challengesOf(m);
        const done = await retry();
        assert.deepEqual(done, { id: card.id, status: 'active' });
        assert.equal(await challengesOf(m), issued, 'no new challenge');
        const after = await client.cards.get(card.id, { onBehalfOf: m });
        assert.deepEqual([after.status, after.inventory_status], ['active', 'bound']);
        // Nothing of the attempt is left on the card; the PIN is nowhere in our tables.
        const row = await cardRow(card.id, ['activation_attempt_ref', 'activation_attempt_at', 'activation_failures']);
        assert.deepEqual(row, { activation_attempt_ref: null, activation_attempt_at: null, activation_failures: 0 });
        const keys = await service.ctx.db.selectFrom('idempotency_keys').select(['response_body']).execute();
        assert.ok(
          keys.every((r) => !/"pin"|"1234"/.test(r.response_body)),
          'the PIN is in no stored answer (as a value; four digits may occur inside a random id)',
        );
      },
    );

    it(
      '502 (never received): the challenge stays single-use for any other request; the same request is asked ' +
        'again and activates',
      async () => {
        const { m, card, body, key, challenge, retry } = await lostActivation('unknown');
        const stored = await cardRow(card.id, ['activation_attempt_ref']);
        assert.match(stored.activation_attempt_ref!, /^[0-9a-f]{64}$/);
        // Another key, the same body and challenge: a new challenge is required.
        await expectCode(
          client.cards.activate(card.id, body, { onBehalfOf: m, stepUp: challenge }),
          'step_up_required',
        );
        // The same key with another body (another PIN: another body hash): not the same request.
        await expectCode(
          client.cards.activate(
            card.id,
            { ...body, pin: '9999' },
            { onBehalfOf: m, idempotencyKey: key, stepUp: challenge },
          ),
          'step_up_required',
        );
        // The step-up refusal left the key reserved for that other body: the original body is now another request for
        // it.
        await expectCode(retry(), 'idempotency_key_reused', 409);
        // Nothing was counted, nothing activated.
        const row = await cardRow(card.id, ['status', 'activation_failures']);
        assert.deepEqual(row, { status: 'unactivated', activation_failures: 0 });
      },
    );

    it('502 then the same request: asked again at the issuer, activates without a new step-up', async () => {
      const { m, card, body, key, retry } = await lostActivation('unknown');
      // Still unknown on the retry: 502 again, nothing counted, still resumable.
      await withIssuer('unknown', () => expectCode(retry(), 'upstream_error', 502));
      const issued = await challengesOf(m);
      assert.deepEqual(await retry(), { id: card.id, status: 'active' });
      assert.equal(await challengesOf(m), issued);
      // The finished result is replayed for the key, with or without the header.
      assert.deepEqual(await client.cards.activate(card.id, body, { onBehalfOf: m, idempotencyKey: key }), {
        id: card.id,
        status: 'active',
      });
    });

    it('a wrong PIN on the resumed request is counted once, like any answered check', async () => {
      const { card, retry } = await lostActivation('unknown', '0000');
      await expectCode(retry(), 'invalid_request');
      const row = await cardRow(card.id, ['activation_failures', 'activation_attempt_ref']);
      assert.deepEqual(row, { activation_failures: 1, activation_attempt_ref: null });
    });

    it('a member signed out (sessions revoked) after the lost answer: the retry needs a new step-up', async () => {
      const { m, card, retry } = await lostActivation('unknown');
      await client.members.revokeSessions(m);
      await expectCode(retry(), 'step_up_required');
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m })).status, 'unactivated');
    });

    it(
      'the resume window is the idempotency window, on real time: ' + 'a sandbox advance of a day does not close it',
      async () => {
        const { m, card, retry } = await lostActivation('unknown');
        // The key is still in its (real-time) window, so is the retry it names (extensions 8).
        await client.sandbox.advanceClock(24 * 3600 + 1);
        const issued = await challengesOf(m);
        assert.deepEqual(await retry(), { id: card.id, status: 'active' });
        assert.equal(await challengesOf(m), issued, 'no new challenge');
      },
    );

    it('the consumed challenge cannot be reused after the resume window (24 hours of real time)', async () => {
      const { card, retry } = await lostActivation('unknown');
      // A day of real time is not waited for: the attempt is dated a day and a second back.
      await setRow(service, 'cards', card.id, { activation_attempt_at: new Date(Date.now() - (24 * 3600 + 1) * 1000) });
      await expectCode(retry(), 'step_up_required');
    });
  });
});
