/**
 * Card controls through HTTP via the SDK: limits (every rule of the reference, recorded at once,
 * pushed by a job, only tightening kept when the push fails), merchant rules (whole-set replace,
 * white/black, 200 + 200, synced/synced_at, baseline unconfirmed on 502), the billing address
 * (synchronous, every error, nothing stored on an unknown outcome) and the CVV unblock (5 per
 * member per hour).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MerchantWalletClient, MerchantWalletError } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { baseUrlFor, newMerchantClient, useTestService, type Credentials } from './support/service.js';
import { expectCode } from './support/expect.js';
import { expectOwnersCardOnly } from './support/card-lifecycle.js';
import { getHostedPage, postHostedPage, testHostedScreenKey } from './support/hosted.js';
import {
  kycMember,
  approvedCard,
  withUpstream,
  invalidFieldKeys,
  unknownStatusAlerts,
  setCardStatus,
  patchCardProducts,
} from './support/fixtures.js';

const address = { address: '2 Market St', city: 'San Francisco', state: 'CA', country: 'US', postal_code: '94105' };

describe('card controls', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  // The request-security clock (rate limits, nonces, tokens), moved by the CVV test instead of waiting an hour.
  let requestOffsetMs = 0;
  const requestNow = () => Date.now() + requestOffsetMs;
  useTestService(
    { requestClock: requestNow, config: { simulatorConfirmDelayMs: 0, hostedScreenKey: testHostedScreenKey } },
    (s) => ({ service, client } = s),
  );

  /** Runs `f` with the card issuer answering `behavior`, then `success` again. */
  const withIssuer = <T>(behavior: string, f: () => Promise<T>) => withUpstream(client, 'card', behavior, f);
  const drain = () => service.workers.jobs.drain();
  /** `send` under a new idempotency key while the issuer answers `behavior`, refused 502 `upstream_error`: the key. */
  async function refused502(behavior: string, send: (idempotencyKey: string) => Promise<unknown>) {
    const key = randomUUID();
    await withIssuer(behavior, () => expectCode(send(key), 'upstream_error', 502));
    return key;
  }
  /** The open `upstream.unknown_status` alerts about a card. */
  const alertsOf = (cardId: string) => unknownStatusAlerts(service, cardId);

  /** A member at KYC level 1 holding 100 USDT: its external id. */
  const member = async () => (await kycMember(service, client, { prefix: 'cc' })).external;
  /** A member with an active virtual card. */
  async function virtualCard() {
    const m = await member();
    return { m, id: await approvedCard(client, m) };
  }
  /**
   * One active virtual card for the tests of a group that leave it usable (made when the first of
   * them asks, so each of them also runs alone): a card costs a member, a KYC review, a deposit, an
   * application and its approval over HTTP. A test that ends the card (a status set, a replacement)
   * or needs one that never had a value set keeps its own; each group says which share and why
   * their order does not matter to what they assert. Its member also serves as "another member"
   * for the other cards of the group.
   */
  function sharedVirtualCard() {
    let card: Promise<{ m: string; id: string }> | undefined;
    return () => (card ??= virtualCard());
  }
  /**
   * Sets up a group of tests (called in its describe): a merchant of the group's own, made before its tests (the
   * orders bucket allows 120 writes a minute), whose client `client` is then (`clientFor` makes it from the
   * merchant's key when the group needs one of its own); answers the group's shared virtual card.
   */
  function ownMerchantGroup(clientFor?: (creds: Credentials) => MerchantWalletClient) {
    before(async () => {
      const own = await newMerchantClient(service);
      client = clientFor ? clientFor(own.creds) : own.client;
    });
    return sharedVirtualCard();
  }
  const setStatus = (id: string, status: string) => setCardStatus(service, id, status);
  /** The card put in each of `statuses` in turn refuses each of `calls` with 400 `state_invalid`. */
  async function refusedInStatuses(id: string, statuses: string[], ...calls: Array<() => Promise<unknown>>) {
    for (const status of statuses) {
      await setStatus(id, status);
      for (const call of calls) await expectCode(call(), 'state_invalid');
    }
  }
  const setProduct = (patch: Record<string, unknown>) => patchCardProducts(service, patch);

  describe('PATCH /v1/cards/{id}/limits', () => {
    // Shared: the first test (it reads the limits of a new card: it runs first), the refusals, the
    // failed and unknown_status pushes (each sets all three limits first and waits for them to be
    // synced) and the withdrawn product. The test that sets the card's status keeps its own.
    const shared = ownMerchantGroup();
    it('records at once, pushes by a job, 0 is no limit, omitted keeps the value', async () => {
      const { m, id } = await shared();
      const before = await client.cards.get(id, { onBehalfOf: m });
      assert.deepEqual(before.limits, { single: '0.00', daily: '0.00', monthly: '0.00' });
      assert.deepEqual(
        await client.cards.setLimits(id, { single: '100', daily: '500.50', monthly: '2000' }, { onBehalfOf: m }),
        { id, accepted: true },
      );
      let card = await client.cards.get(id, { onBehalfOf: m });
      assert.deepEqual(card.limits, { single: '100.00', daily: '500.50', monthly: '2000.00' });
      assert.equal(card.limits_sync, 'pending');
      await drain();
      card = await client.cards.get(id, { onBehalfOf: m });
      assert.equal(card.limits_sync, 'synced');
      await client.cards.setLimits(id, { daily: '0' }, { onBehalfOf: m });
      card = await client.cards.get(id, { onBehalfOf: m });
      assert.deepEqual(card.limits, { single: '100.00', daily: '0.00', monthly: '2000.00' });
      await drain();
      // `crd_` prefix optional.
      await client.cards.setLimits(id.slice(4), { monthly: '0' }, { onBehalfOf: m });
      assert.equal((await client.cards.get(id, { onBehalfOf: m })).limits.monthly, '0.00');
      await drain();
    });

    it(
      'refuses below one unit, above the product caps, out of order (invalid_fields without fields); malformed ' +
        'amounts are invalid_request',
      async () => {
        const { m, id } = await shared();
        for (const body of [
          { single: '0.99' },
          { single: '10000.01' },
          { daily: '20000.01' },
          { monthly: '100000.01' },
          { single: '200', daily: '100' },
          { single: '10', daily: '20', monthly: '15' },
        ]) {
          await assert.rejects(client.cards.setLimits(id, body, { onBehalfOf: m }), (err: unknown) => {
            assert.ok(err instanceof MerchantWalletError);
            assert.equal(err.code, 'invalid_fields', JSON.stringify(body));
            assert.equal(err.body.fields, undefined);
            return true;
          });
        }
        // Zeros are not compared; the caps themselves are allowed; one whole unit is the minimum.
        await client.cards.setLimits(id, { single: '10000', daily: '0', monthly: '1' }, { onBehalfOf: m }).then(
          () => assert.fail('single 10000 > monthly 1 must be refused'),
          (err: MerchantWalletError) => assert.equal(err.code, 'invalid_fields'),
        );
        await client.cards.setLimits(id, { single: '10000', daily: '0', monthly: '100000' }, { onBehalfOf: m });
        await client.cards.setLimits(id, { single: '1', daily: '20000', monthly: '0' }, { onBehalfOf: m });
        for (const bad of ['1.001', 'abc', '-5', '1e3'])
          await expectCode(client.cards.setLimits(id, { single: bad }, { onBehalfOf: m }), 'invalid_request');
        // The refused calls changed nothing.
        assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).limits, {
          single: '1.00',
          daily: '20000.00',
          monthly: '0.00',
        });
        await drain();
      },
    );

    it("refuses closed, closing, expired cards; another member's card is not_found", async () => {
      const { m, id } = await virtualCard();
      const { m: other } = await shared();
      await expectOwnersCardOnly(
        (card, member) => client.cards.setLimits(card, { single: '5' }, { onBehalfOf: member }),
        id,
        m,
        other,
      );
      await refusedInStatuses(id, ['closing', 'closed', 'expired'], () =>
        client.cards.setLimits(id, { single: '5' }, { onBehalfOf: m }),
      );
    });

    it('a failed push keeps only tightening: a loosened layer falls back, a tightened one stays', async () => {
      const { m, id } = await shared();
      await client.cards.setLimits(id, { single: '100', daily: '1000', monthly: '5000' }, { onBehalfOf: m });
      await drain();
      assert.equal((await client.cards.get(id, { onBehalfOf: m })).limits_sync, 'synced');
      await withIssuer('reject', async () => {
        // single tightened, daily loosened, monthly removed (a loosening).
        await client.cards.setLimits(id, { single: '50', daily: '2000', monthly: '0' }, { onBehalfOf: m });
        assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).limits, {
          single: '50.00',
          daily: '2000.00',
          monthly: '0.00',
        });
        await drain();
      });
      const card = await client.cards.get(id, { onBehalfOf: m });
      assert.equal(card.limits_sync, 'failed');
      assert.deepEqual(card.limits, { single: '50.00', daily: '1000.00', monthly: '5000.00' });
      // A later successful push confirms the new set.
      await client.cards.setLimits(id, { daily: '3000' }, { onBehalfOf: m });
      await drain();
      const after = await client.cards.get(id, { onBehalfOf: m });
      assert.equal(after.limits_sync, 'synced');
      assert.deepEqual(after.limits, { single: '50.00', daily: '3000.00', monthly: '5000.00' });
    });

    it(
      'unknown_status: a push answered outside our enumeration is no confirmation; asked again, then only ' +
        'tightening kept; one operator alert',
      async () => {
        const { m, id } = await shared();
        await client.cards.setLimits(id, { single: '100', daily: '1000', monthly: '5000' }, { onBehalfOf: m });
        await drain();
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).limits_sync, 'synced');
        await withIssuer('unknown_status', async () => {
          await client.cards.setLimits(id, { single: '50', daily: '2000' }, { onBehalfOf: m });
          await drain();
        });
        const card = await client.cards.get(id, { onBehalfOf: m });
        assert.equal(card.limits_sync, 'pending', 'not taken as confirmed');
        assert.equal((await alertsOf(id)).length, 1);
        // The issuer answers that request so on every retry: after the last attempt the loosened daily falls back.
        for (let i = 0; i < 5; i++) {
          await client.sandbox.advanceClock(700);
          await drain();
        }
        const after = await client.cards.get(id, { onBehalfOf: m });
        assert.equal(after.limits_sync, 'failed');
        assert.deepEqual(after.limits, { single: '50.00', daily: '1000.00', monthly: '5000.00' });
        assert.equal((await alertsOf(id)).length, 1);
      },
    );

    it('a withdrawn product answers product_not_available', async () => {
      const { m, id } = await shared();
      await setProduct({ enabled: false });
      try {
        await expectCode(client.cards.setLimits(id, { single: '5' }, { onBehalfOf: m }), 'product_not_available');
      } finally {
        await setProduct({ enabled: true });
      }
    });
  });

  describe('merchant rules', () => {
    // Shared: the first test (it reads the rules of a new card: it runs first), the DELETE, the
    // field checks and the 502 test (each sets the rules it then reads). The status test ends its
    // card; the unknown_status test needs a card whose rules were never confirmed (synced_at null).
    const shared = ownMerchantGroup();
    /** The card's rules set to `rules` while the issuer answers `behavior` (502): the key, and the rules the card
     * then holds. */
    async function rulesSetOn502(
      behavior: string,
      m: string,
      id: string,
      rules: Parameters<MerchantWalletClient['cards']['setMerchantRules']>[1],
    ) {
      const key = await refused502(behavior, (idempotencyKey) =>
        client.cards.setMerchantRules(id, rules, { onBehalfOf: m, idempotencyKey }),
      );
      return { key, stored: await client.cards.getMerchantRules(id, { onBehalfOf: m }) };
    }
    it('GET before any: no rules; PUT replaces the whole set and is confirmed; DELETE removes it', async () => {
      const { m, id } = await shared();
      assert.deepEqual(await client.cards.getMerchantRules(id, { onBehalfOf: m }), {
        id,
        rule_type: null,
        merchant_names: [],
        mcc_list: [],
        synced: true,
        synced_at: null,
      });
      const first = await client.cards.setMerchantRules(
        id,
        { rule_type: 'black', merchant_names: ['ACME CASINO'], mcc_list: ['7995'] },
        { onBehalfOf: m },
      );
      assert.equal(first.id, id);
      assert.equal(first.rule_type, 'black');
      assert.deepEqual(first.merchant_names, ['ACME CASINO']);
      assert.deepEqual(first.mcc_list, ['7995']);
      assert.equal(first.synced, true);
      assert.match(first.synced_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const second = await client.cards.setMerchantRules(
        id,
        { rule_type: 'white', mcc_list: ['5411', '5812'] },
        { onBehalfOf: m },
      );
      assert.deepEqual(
        { ...second, synced_at: null },
        { id, rule_type: 'white', merchant_names: [], mcc_list: ['5411', '5812'], synced: true, synced_at: null },
      );
      assert.deepEqual(await client.cards.getMerchantRules(id, { onBehalfOf: m }), second);
      const removed = await client.cards.deleteMerchantRules(id, { onBehalfOf: m });
      assert.equal(removed.rule_type, null);
      assert.equal(removed.synced, true);
      assert.deepEqual((await client.cards.getMerchantRules(id, { onBehalfOf: m })).mcc_list, []);
    });

    it(
      'DELETE needs no idempotency key (the reference: deletes are naturally idempotent); a repeat answers the ' +
        'same',
      async () => {
        const { m, id } = await shared();
        await client.cards.setMerchantRules(id, { rule_type: 'black', mcc_list: ['7995'] }, { onBehalfOf: m });
        const remove = () =>
          client.requestRaw({
            method: 'DELETE',
            path: `/v1/cards/${id}/merchant-rules`,
            onBehalfOf: m,
            idempotencyKey: false,
          });
        const first = await remove();
        assert.equal(first.status, 200, JSON.stringify(first.body));
        assert.equal(first.body.rule_type, null);
        assert.equal(first.body.synced, true);
        assert.equal(first.headers['x-idempotent-replay'], undefined);
        const again = await remove();
        assert.equal(again.status, 200, JSON.stringify(again.body));
        assert.equal(again.body.rule_type, null);
        assert.deepEqual((await client.cards.getMerchantRules(id, { onBehalfOf: m })).mcc_list, []);
        // A key, when sent, still replays.
        const key = randomUUID();
        const keyed = await client.requestRaw({
          method: 'DELETE',
          path: `/v1/cards/${id}/merchant-rules`,
          onBehalfOf: m,
          idempotencyKey: key,
        });
        assert.equal(keyed.status, 200);
        const replayed = await client.requestRaw({
          method: 'DELETE',
          path: `/v1/cards/${id}/merchant-rules`,
          onBehalfOf: m,
          idempotencyKey: key,
        });
        assert.equal(replayed.headers['x-idempotent-replay'], 'true');
        assert.deepEqual(replayed.body, keyed.body);
      },
    );

    it(
      'invalid_fields with fields: bad MCC, both lists empty, more than 200 entries, bad rule type; 200 + 200 ' +
        'accepted',
      async () => {
        const { m, id } = await shared();
        const fieldsOf = (body: any) => invalidFieldKeys(client.cards.setMerchantRules(id, body, { onBehalfOf: m }));
        assert.deepEqual(await fieldsOf({ rule_type: 'black', mcc_list: ['599'] }), ['mcc_list[0]']);
        assert.deepEqual(await fieldsOf({ rule_type: 'black', mcc_list: ['ABCD'] }), ['mcc_list[0]']);
        assert.deepEqual(await fieldsOf({ rule_type: 'black', merchant_names: [], mcc_list: [] }), ['merchant_names']);
        assert.deepEqual(await fieldsOf({ rule_type: 'black' }), ['merchant_names']);
        assert.deepEqual(await fieldsOf({ rule_type: 'grey', mcc_list: ['5411'] }), ['rule_type']);
        const mccs = Array.from({ length: 201 }, (_, i) => String(1000 + i));
        const names = Array.from({ length: 201 }, (_, i) => `Shop ${i}`);
        assert.deepEqual(await fieldsOf({ rule_type: 'white', mcc_list: mccs }), ['mcc_list']);
        assert.deepEqual(await fieldsOf({ rule_type: 'white', merchant_names: names }), ['merchant_names']);
        const ok = await client.cards.setMerchantRules(
          id,
          { rule_type: 'white', merchant_names: names.slice(0, 200), mcc_list: mccs.slice(0, 200) },
          { onBehalfOf: m },
        );
        assert.equal(ok.merchant_names.length, 200);
        assert.equal(ok.mcc_list.length, 200);
      },
    );

    it(
      'state_invalid on a closed card, product_not_available without card-level lists, not_found for another ' +
        'member',
      async () => {
        const { m, id } = await virtualCard();
        const { m: other } = await shared();
        const body = { rule_type: 'black' as const, mcc_list: ['7995'] };
        await expectCode(client.cards.setMerchantRules(id, body, { onBehalfOf: other }), 'not_found', 404);
        await expectCode(client.cards.getMerchantRules(id, { onBehalfOf: other }), 'not_found', 404);
        await setProduct({ card_lists_supported: false });
        try {
          await expectCode(client.cards.setMerchantRules(id, body, { onBehalfOf: m }), 'product_not_available');
        } finally {
          await setProduct({ card_lists_supported: true });
        }
        await refusedInStatuses(
          id,
          ['replaced'],
          () => client.cards.setMerchantRules(id, body, { onBehalfOf: m }),
          () => client.cards.deleteMerchantRules(id, { onBehalfOf: m }),
        );
      },
    );

    it(
      '502: the requested set is the baseline, unconfirmed; a retry with the same key confirms it; a refusal ' +
        'keeps the confirmed set',
      async () => {
        const { m, id } = await shared();
        const confirmed = await client.cards.setMerchantRules(
          id,
          { rule_type: 'black', mcc_list: ['7995'] },
          { onBehalfOf: m },
        );
        const body = { rule_type: 'white' as const, merchant_names: ['Corner Shop'] };
        const { key, stored } = await rulesSetOn502('unknown', m, id, body);
        assert.equal(stored.rule_type, 'white');
        assert.deepEqual(stored.merchant_names, ['Corner Shop']);
        assert.equal(stored.synced, false);
        assert.equal(stored.synced_at, confirmed.synced_at);
        const retried = await client.cards.setMerchantRules(id, body, { onBehalfOf: m, idempotencyKey: key });
        assert.equal(retried.synced, true);
        assert.deepEqual((await client.cards.getMerchantRules(id, { onBehalfOf: m })).synced, true);

        await withIssuer('reject', async () => {
          await expectCode(
            client.cards.setMerchantRules(id, { rule_type: 'black', mcc_list: ['1234'] }, { onBehalfOf: m }),
            'invalid_request',
          );
        });
        const kept = await client.cards.getMerchantRules(id, { onBehalfOf: m });
        assert.deepEqual([kept.rule_type, kept.merchant_names, kept.synced], ['white', ['Corner Shop'], true]);
      },
    );

    it(
      'unknown_status: an answer outside our enumeration is no confirmation: 502, the set stored unconfirmed ' +
        '(synced: false), one operator alert',
      async () => {
        const { m, id } = await virtualCard();
        const body = { rule_type: 'black' as const, mcc_list: ['7995'] };
        const { key, stored } = await rulesSetOn502('unknown_status', m, id, body);
        assert.deepEqual(
          [stored.rule_type, stored.mcc_list, stored.synced, stored.synced_at],
          ['black', ['7995'], false, null],
        );
        assert.equal((await alertsOf(id)).length, 1);
        // The issuer keeps answering that request so: a retry is 502 again, with no second alert.
        await expectCode(
          client.cards.setMerchantRules(id, body, { onBehalfOf: m, idempotencyKey: key }),
          'upstream_error',
          502,
        );
        assert.equal((await alertsOf(id)).length, 1);
        assert.equal(
          (await client.cards.setMerchantRules(id, body, { onBehalfOf: m })).synced,
          true,
          'a new request is confirmed',
        );
      },
    );
  });

  describe('PATCH /v1/cards/{id}/billing-address', () => {
    // Shared: the field checks and the unknown_status test (both leave the card without an
    // address, as they assert), then the retry test (the last: it stores one). The first test and
    // the 502 test store an address on a card that has none, the status test ends its card: each
    // keeps its own.
    const shared = ownMerchantGroup();
    it('200 when the issuer confirms; the card shows it; state omitted where none', async () => {
      const { m, id } = await virtualCard();
      const res = await client.cards.updateBillingAddress(id, address, { onBehalfOf: m });
      assert.deepEqual(res, { id, billing_address: address });
      assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).billing_address, address);
      const de = { address: 'Unter den Linden 1', city: 'Berlin', country: 'DE', postal_code: '10117' };
      assert.deepEqual((await client.cards.updateBillingAddress(id, de, { onBehalfOf: m })).billing_address, de);
    });

    it('invalid_fields with fields for missing fields and a bad country', async () => {
      const { m, id } = await shared();
      const keys = async (body: any) =>
        (await invalidFieldKeys(client.cards.updateBillingAddress(id, body, { onBehalfOf: m }))).sort();
      assert.deepEqual(await keys({}), ['address', 'city', 'country', 'postal_code']);
      assert.deepEqual(await keys({ ...address, country: 'us' }), ['country']);
      assert.deepEqual(await keys({ ...address, country: 'USA' }), ['country']);
      assert.deepEqual(await keys({ ...address, city: '  ' }), ['city']);
      assert.equal((await client.cards.get(id, { onBehalfOf: m })).billing_address, null);
    });

    it('state_invalid, product_not_available, invalid_request (refused), not_found', async () => {
      const { m, id } = await virtualCard();
      await expectCode(
        client.cards.updateBillingAddress(id, address, { onBehalfOf: (await shared()).m }),
        'not_found',
        404,
      );
      await expectCode(
        client.cards.updateBillingAddress(id, { ...address, address: 'SIM-REFUSE 1' }, { onBehalfOf: m }),
        'invalid_request',
      );
      await withIssuer('reject', async () => {
        await expectCode(client.cards.updateBillingAddress(id, address, { onBehalfOf: m }), 'invalid_request');
      });
      await setProduct({ billing_address_updatable: false });
      try {
        await expectCode(client.cards.updateBillingAddress(id, address, { onBehalfOf: m }), 'product_not_available');
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).billing_address_updatable, false);
      } finally {
        await setProduct({ billing_address_updatable: true });
      }
      assert.equal((await client.cards.get(id, { onBehalfOf: m })).billing_address, null);
      await refusedInStatuses(id, ['closed', 'expired', 'replaced'], () =>
        client.cards.updateBillingAddress(id, address, { onBehalfOf: m }),
      );
    });

    it(
      '502 upstream_error on an unknown outcome (timeout or 5xx): not stored; a retry with the same key stores ' + 'it',
      async () => {
        const { m, id } = await virtualCard();
        let stored: typeof address | null = null;
        for (const behavior of ['timeout', 'unknown']) {
          const key = await refused502(behavior, (idempotencyKey) =>
            client.cards.updateBillingAddress(id, address, { onBehalfOf: m, idempotencyKey }),
          );
          assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).billing_address, stored);
          if (behavior === 'timeout') {
            // A 5xx is not the key's result: the key may come back with another body, and the
            // issuer is asked about that body (not answered with what it did for the first).
            const again = { ...address, postal_code: '94106' };
            assert.deepEqual(
              (await client.cards.updateBillingAddress(id, again, { onBehalfOf: m, idempotencyKey: key }))
                .billing_address,
              again,
            );
            assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).billing_address, again);
            stored = again;
          }
        }
        assert.deepEqual(
          (await client.cards.updateBillingAddress(id, address, { onBehalfOf: m })).billing_address,
          address,
        );
        assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).billing_address, address);
      },
    );

    it(
      'unknown_status: an answer outside our enumeration is no confirmation: 502, the address not stored, an ' +
        'operator alert',
      async () => {
        const { m, id } = await shared();
        await withIssuer('unknown_status', async () => {
          await expectCode(client.cards.updateBillingAddress(id, address, { onBehalfOf: m }), 'upstream_error', 502);
        });
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).billing_address, null);
        assert.equal((await alertsOf(id)).length, 1);
      },
    );

    it('a retry with the same key after a 502 stores the address', async () => {
      const { m, id } = await shared();
      const key = randomUUID();
      await withIssuer('unknown', async () => {
        await expectCode(
          client.cards.updateBillingAddress(id, address, { onBehalfOf: m, idempotencyKey: key }),
          'upstream_error',
          502,
        );
      });
      assert.equal((await client.cards.get(id, { onBehalfOf: m })).billing_address, null);
      assert.deepEqual(
        (await client.cards.updateBillingAddress(id, address, { onBehalfOf: m, idempotencyKey: key })).billing_address,
        address,
      );
      assert.deepEqual((await client.cards.get(id, { onBehalfOf: m })).billing_address, address);
    });
  });

  describe('POST /v1/cards/{id}/cvv/unblock', () => {
    // Shared: the rate-limit test's other member (its one call leaves it far from the limit), the
    // closed-card test's other member and the unknown_status test (it blocks the CVV first). The
    // rate-limit test and the test of calls stamped ahead count one member's calls exactly; the
    // closed-card test ends its card: each keeps its own. The group's client signs on the request clock, so the
    // test can move that clock an hour without the timestamp check refusing it.
    /** The card, its CVV blocked (as the issuer reports after too many wrong entries). */
    async function withCvvBlocked(card: { m: string; id: string }) {
      await service.ctx.db.updateTable('cards').set({ cvv_blocked: true }).where('id', '=', card.id).execute();
      return card;
    }
    const shared = ownMerchantGroup(
      (creds) =>
        new MerchantWalletClient({
          baseUrl: baseUrlFor(service, creds.environment),
          connectHost: '127.0.0.1',
          clientId: creds.clientId,
          apiKey: creds.apiKey,
          signingKey: creds.signingKey,
          maxAttempts: 1,
          now: requestNow,
        }),
    );
    it(
      'unblocks (cvv_blocked false on the card), 5 calls per member per hour, then 429 with Retry-After; the ' +
        'hour is real time, not the sandbox clock',
      async () => {
        const { m, id } = await withCvvBlocked(await virtualCard());
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).cvv_blocked, true);
        assert.deepEqual(await client.cards.unblockCvv(id, { onBehalfOf: m }), { unblocked: true });
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).cvv_blocked, false);
        const key = randomUUID();
        await client.cards.unblockCvv(id.slice(4), { onBehalfOf: m, idempotencyKey: key });
        // A replay of a finished key is not counted.
        await client.cards.unblockCvv(id.slice(4), { onBehalfOf: m, idempotencyKey: key });
        await client.cards.unblockCvv(id, { onBehalfOf: m });
        await client.cards.unblockCvv(id, { onBehalfOf: m });
        await client.cards.unblockCvv(id, { onBehalfOf: m });
        const limited = async (what: string) =>
          assert.rejects(client.cards.unblockCvv(id, { onBehalfOf: m }), (err: unknown) => {
            assert.ok(err instanceof MerchantWalletError, what);
            assert.equal(err.code, 'rate_limited', what);
            assert.equal(err.status, 429, what);
            const retry = Number(err.body.retry_after);
            assert.ok(retry > 3500 && retry <= 3600, `${what}: ${retry}`);
            assert.equal(String(err.headers['retry-after']), String(retry), what);
            return true;
          });
        await limited('the sixth call');
        // Per member: another member is not limited.
        const other = await shared();
        assert.deepEqual(await client.cards.unblockCvv(other.id, { onBehalfOf: other.m }), { unblocked: true });
        // A rate limit stays on real time (extensions 8): an hour on the merchant's sandbox clock lifts nothing.
        await client.sandbox.advanceClock(3601);
        await limited('after the sandbox clock moved an hour');
        // An hour later in real time, the calls have left the window.
        requestOffsetMs = 3_601_000;
        try {
          assert.deepEqual(await client.cards.unblockCvv(id, { onBehalfOf: m }), { unblocked: true });
        } finally {
          requestOffsetMs = 0;
        }
      },
    );

    it(
      'calls stamped more than an hour ahead of real time (left from the sandbox clock) are not counted, and ' +
        'are dropped',
      async () => {
        const { m, id } = await virtualCard();
        const memberId = (
          await service.ctx.db.selectFrom('cards').select('member_id').where('id', '=', id).executeTakeFirstOrThrow()
        ).member_id;
        const aYearAhead = new Date(Date.now() + 365 * 86_400_000);
        await service.ctx.db
          .insertInto('card_cvv_unblock_calls')
          .values([0, 1, 2, 3, 4].map((i) => ({ member_id: memberId, called_at: new Date(aYearAhead.getTime() + i) })))
          .execute();
        assert.deepEqual(await client.cards.unblockCvv(id, { onBehalfOf: m }), { unblocked: true });
        const left = await service.ctx.db
          .selectFrom('card_cvv_unblock_calls')
          .select('called_at')
          .where('member_id', '=', memberId)
          .execute();
        assert.equal(left.length, 1, 'only the call just made');
        assert.ok(new Date(left[0]!.called_at).getTime() <= Date.now());
      },
    );

    it(
      'state_invalid on a closed card, not_found for another member, ' + 'idempotency_key_required without a key',
      async () => {
        const { m, id } = await virtualCard();
        await expectCode(client.cards.unblockCvv(id, { onBehalfOf: (await shared()).m }), 'not_found', 404);
        await expectCode(
          client.request({ method: 'POST', path: `/v1/cards/${id}/cvv/unblock`, onBehalfOf: m, idempotencyKey: false }),
          'idempotency_key_required',
        );
        await refusedInStatuses(id, ['closed'], () => client.cards.unblockCvv(id, { onBehalfOf: m }));
      },
    );

    it(
      'unknown_status: an answer outside our enumeration is no confirmation: 502, cvv_blocked unchanged, an ' +
        'operator alert',
      async () => {
        const { m, id } = await withCvvBlocked(await shared());
        await withIssuer('unknown_status', async () => {
          await expectCode(client.cards.unblockCvv(id, { onBehalfOf: m }), 'upstream_error', 502);
        });
        assert.equal((await client.cards.get(id, { onBehalfOf: m })).cvv_blocked, true);
        assert.equal((await alertsOf(id)).length, 1);
      },
    );
  });

  describe('POST /v1/cards/{id}/secure-session and the reveal screen', () => {
    // Shared: the reveal (each link is its own) and the scope check, and the other member of the
    // second test. The second test closes its card and the third has it replaced: each keeps its own.
    const shared = ownMerchantGroup();

    it(
      'the member sees number, expiry and CVV once, on the page only; ' + 'the API and the database never hold them',
      async () => {
        const { m, id } = await shared();
        const card = await client.cards.get(id, { onBehalfOf: m });
        const ticket = await client.cards.createSecureSession(id, { onBehalfOf: m });
        assert.match(ticket.id, /^kyc_[0-9a-f]{32}$/);
        assert.deepEqual(Object.keys(ticket).sort(), ['expires_at', 'hosted_url', 'id']);
        const first = await getHostedPage(service, ticket.hosted_url);
        assert.equal(first.status, 200);
        assert.match(String(first.headers['cache-control']), /no-store/);
        assert.ok(first.text.includes(card.last4));
        assert.ok(!/\b\d{4} \d{4} \d{4} \d{4}\b/.test(first.text), 'the first view shows no number');
        const shown = await postHostedPage(service, ticket.hosted_url, {
          fields: { csrf_token: first.csrfToken! },
          cookie: first.cookie,
        });
        assert.equal(shown.status, 200, shown.text);
        assert.match(String(shown.headers['cache-control']), /no-store/);
        const number = /(\d{4} \d{4} \d{4} \d{4})/.exec(shown.text)?.[1]?.replaceAll(' ', '');
        assert.ok(number, shown.text);
        assert.ok(number.endsWith(card.last4));
        const expiry = `${String(card.exp_month).padStart(2, '0')}/${String(card.exp_year % 100).padStart(2, '0')}`;
        assert.ok(shown.text.includes(expiry));
        const cvv = /CVV<\/dt><dd>(\d{3})</.exec(shown.text)?.[1];
        assert.ok(cvv, 'the CVV is on the page');
        // Single use: the link is spent.
        const again = await getHostedPage(service, ticket.hosted_url);
        assert.ok(!again.text.includes(number.slice(0, 4) + ' '), 'not shown twice');
        // Never in the API nor the database.
        assert.ok(!JSON.stringify(await client.cards.get(id, { onBehalfOf: m })).includes(number));
        const dump = JSON.stringify(
          await Promise.all(
            ['cards', 'hosted_tickets', 'events', 'idempotency_keys', 'upstream_sim_orders'].map((t) =>
              service.ctx.db
                .selectFrom(t as 'cards')
                .selectAll()
                .execute(),
            ),
          ),
          (_k, v) => (typeof v === 'bigint' ? String(v) : v),
        );
        assert.ok(!dump.includes(number), 'the number is stored nowhere');
      },
    );

    it('an issuer fault leaves the link usable; closed cards and other members are refused', async () => {
      const { m, id } = await virtualCard();
      const ticket = await client.cards.createSecureSession(id, { onBehalfOf: m });
      const page = await getHostedPage(service, ticket.hosted_url);
      const res = await withIssuer('unknown', () =>
        postHostedPage(service, ticket.hosted_url, { fields: { csrf_token: page.csrfToken! }, cookie: page.cookie }),
      );
      assert.equal(res.status, 400);
      assert.match(res.text, /cannot be shown right now/);
      const retry = await getHostedPage(service, ticket.hosted_url, { cookie: page.cookie });
      const ok = await postHostedPage(service, ticket.hosted_url, {
        fields: { csrf_token: retry.csrfToken! },
        cookie: retry.cookie,
      });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /Card number/);
      await expectCode(client.cards.createSecureSession(id, { onBehalfOf: (await shared()).m }), 'not_found', 404);
      await refusedInStatuses(id, ['closed'], () => client.cards.createSecureSession(id, { onBehalfOf: m }));
    });

    it(
      'a card frozen by a security replacement (reported stolen) shows its details no more: no new link, and ' +
        'an open link is gone',
      async () => {
        const { m, id } = await virtualCard();
        const open = await client.cards.createSecureSession(id, { onBehalfOf: m });
        await client.cards.requestReplacement(id, { reason: 'stolen' }, { onBehalfOf: m });
        await expectCode(client.cards.createSecureSession(id, { onBehalfOf: m }), 'state_invalid');
        const page = await getHostedPage(service, open.hosted_url);
        assert.match(page.text, /Card details unavailable/);
        assert.equal(page.csrfToken, undefined, 'nothing to submit');
      },
    );

    it('needs the restricted scope cards:secure', async () => {
      const { m, id } = await shared();
      const limited = await newMerchantClient(service, { scopes: ['cards:write', 'members:write'] });
      await expectCode(limited.client.cards.createSecureSession(id, { onBehalfOf: m }), 'insufficient_scope', 403);
    });
  });
});
