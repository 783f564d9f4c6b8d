/**
 * Closing and expiry of cards through HTTP via the SDK (docs/cards.md, "Replacement, closing and
 * expiry"): `closing` → `closed` when the issuer confirms, the balance back to available then and
 * only once; an issuer without an answer leaves the card `closing` until reconciliation hears it;
 * a refusal puts the card back; expiry by the sandbox clock. The ledger is verified after each
 * money step.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { admin, newMerchantClient, useTestService } from './support/service.js';
import { expectCode } from './support/expect.js';
import { lifecycleHelpers, ownMerchantLifecycle } from './support/card-lifecycle.js';
import { cardLifecycleJobHandlers, cardLifecycleTickers } from '../src/modules/cards/shared/workers.js';
import { RetryLater } from '../src/jobs/types.js';
import { setRow, withUpstream } from './support/fixtures.js';

// One service for both describes (the same configuration), a merchant of its own for each.
let service: RunningService;
useTestService({ config: { simulatorConfirmDelayMs: 0 } }, (s) => ({ service } = s));

describe('card closing and expiry', () => {
  let client: MerchantWalletClient;
  const h = ownMerchantLifecycle(
    () => service,
    (own) => ({ client } = own),
  );

  it(
    'closes an active card: closed once the issuer confirms, the balance back to available then; held amounts ' +
      'stay; repeats answer closed',
    async () => {
      const { m, card } = await h.fundedCard(2000n);
      await h.hold(m, card.id, 500n);
      const usdBefore = await h.available(m, 'USD');
      const key = randomUUID();
      assert.deepEqual(await client.cards.close(card.id, { onBehalfOf: m.external, idempotencyKey: key }), {
        id: card.id,
        status: 'closed',
      });
      assert.equal(await h.available(m, 'USD'), usdBefore + 1500n);
      assert.equal(await h.onCard(m, card.id), 0n);
      assert.equal(await h.held(m, card.id), 500n);
      await h.ledgerOk();
      const closed = await client.cards.get(card.id, { onBehalfOf: m.external });
      assert.equal(closed.status, 'closed');
      // The same key replays; a new key on a closed card answers its status; nothing moves again.
      assert.deepEqual(await client.cards.close(card.id, { onBehalfOf: m.external, idempotencyKey: key }), {
        id: card.id,
        status: 'closed',
      });
      assert.deepEqual(await client.cards.close(card.id.slice(4), { onBehalfOf: m.external }), {
        id: card.id,
        status: 'closed',
      });
      assert.equal(await h.available(m, 'USD'), usdBefore + 1500n);
      assert.equal(await h.entries('card.balance_return', `${card.id}:close`), 1);
      const evs = (await h.events(card.id)).map((e) => `${e.type}:${e.status_version}`);
      assert.deepEqual(evs.slice(-2), [
        `card.closing:${closed.status_version - 1}`,
        `card.closed:${closed.status_version}`,
      ]);
      // A closed card is terminal for the other calls.
      await expectCode(
        client.cards.requestReplacement(card.id, { reason: 'stolen' }, { onBehalfOf: m.external }),
        'state_invalid',
        400,
      );
      await expectCode(
        client.cards.setLimits(card.id, { single: '10' }, { onBehalfOf: m.external }),
        'state_invalid',
        400,
      );
    },
  );

  it(
    'closes a card never activated; refuses another member, an unknown card, a card with a replacement in ' +
      'flight, and a replaced card',
    async () => {
      const { m, card: physical } = await h.memberWithCard('physical');
      assert.equal(physical.status, 'unactivated');
      assert.equal((await client.cards.close(physical.id, { onBehalfOf: m.external })).status, 'closed');
      await expectCode(client.cards.close(`crd_${randomUUID()}`, { onBehalfOf: m.external }), 'not_found', 404);
      const card = await h.card(m, 'virtual');
      await expectCode(client.cards.close(card.id, { onBehalfOf: (await h.member('0')).external }), 'not_found', 404);
      const { id } = await client.cards.requestReplacement(card.id, { reason: 'damaged' }, { onBehalfOf: m.external });
      await expectCode(client.cards.close(card.id, { onBehalfOf: m.external }), 'state_invalid', 400);
      await client.sandbox.advanceClock(61);
      assert.equal((await client.cards.getReplacement(id)).status, 'completed');
      await expectCode(client.cards.close(card.id, { onBehalfOf: m.external }), 'state_invalid', 400);
    },
  );

  it(
    'an issuer without an answer leaves the card closing (nothing returned, nothing spends) until ' +
      'reconciliation hears it: closed once',
    async () => {
      const { m, card } = await h.fundedCard(1100n);
      const usdBefore = await h.available(m, 'USD');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'timeout' });
      assert.deepEqual(await client.cards.close(card.id, { onBehalfOf: m.external }), {
        id: card.id,
        status: 'closing',
      });
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'closing');
      assert.equal(await h.available(m, 'USD'), usdBefore, 'returned only once the issuer confirms');
      assert.equal(await h.onCard(m, card.id), 1100n);
      await expectCode(
        client.cards.requestReplacement(card.id, { reason: 'stolen' }, { onBehalfOf: m.external }),
        'state_invalid',
        400,
      );
      assert.deepEqual(await client.cards.close(card.id, { onBehalfOf: m.external }), {
        id: card.id,
        status: 'closing',
      });
      // Reconciliation asks again while the issuer still does not answer: still closing.
      await client.sandbox.advanceClock(300);
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'closing');
      assert.equal(await h.onCard(m, card.id), 1100n);
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      await client.sandbox.advanceClock(3600);
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'closed');
      assert.equal(await h.available(m, 'USD'), usdBefore + 1100n);
      await client.sandbox.advanceClock(3600);
      assert.equal(await h.available(m, 'USD'), usdBefore + 1100n);
      assert.equal(await h.entries('card.balance_return', `${card.id}:close`), 1);
    },
  );

  it(
    'unknown_status: a cancellation answered outside our enumeration is no confirmation: closing, nothing ' +
      'returned, one operator alert',
    async () => {
      const { m, card } = await h.fundedCard(1100n);
      const usdBefore = await h.available(m, 'USD');
      const alerts = async () =>
        (await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100')).body.data.filter(
          (a: { object_id: string }) => a.object_id === card.id,
        );
      await withUpstream(client, 'card', 'unknown_status', async () => {
        assert.deepEqual(await client.cards.close(card.id, { onBehalfOf: m.external }), {
          id: card.id,
          status: 'closing',
        });
      });
      assert.equal((await alerts()).length, 1);
      // The issuer answers that request so every time it is asked again: still closing, no second alert.
      await client.sandbox.advanceClock(3600);
      assert.equal((await client.cards.get(card.id, { onBehalfOf: m.external })).status, 'closing');
      assert.equal(await h.available(m, 'USD'), usdBefore, 'nothing returned');
      assert.equal(await h.onCard(m, card.id), 1100n);
      assert.equal((await alerts()).length, 1);
    },
  );

  it('the issuer refuses: state_invalid, the card is back as it was with its balance', async () => {
    const { m, card } = await h.fundedCard(400n);
    await withUpstream(client, 'card', 'reject', async () => {
      await expectCode(client.cards.close(card.id, { onBehalfOf: m.external }), 'state_invalid', 400);
    });
    const after = await client.cards.get(card.id, { onBehalfOf: m.external });
    assert.equal(after.status, 'active');
    assert.equal(await h.onCard(m, card.id), 400n);
    assert.deepEqual((await h.events(card.id)).map((e) => e.type).slice(-2), ['card.closing', 'card.active']);
  });

  it(
    'expiry by the clock: a card past its expiry month becomes expired with card.expired and its balance back; ' +
      'closed cards stay closed',
    async () => {
      // A merchant of its own: its clock moves years.
      const own = await newMerchantClient(service);
      const h2 = lifecycleHelpers(() => ({ service, ...own }));
      const m = await h2.member();
      const card = await h2.card(m, 'virtual');
      const closedCard = await h2.card(m, 'virtual');
      await own.client.cards.close(closedCard.id, { onBehalfOf: m.external });
      await h2.fundCard(m, card.id, 800n);
      const usdBefore = await h2.available(m, 'USD');
      const { now } = await own.client.sandbox.clock();
      const expiresAt = Date.UTC(card.exp_year, card.exp_month, 1);
      const untilExpiry = Math.floor((expiresAt - new Date(now).getTime()) / 1000);
      // Just before: still active.
      let left = untilExpiry - 60;
      while (left > 0) {
        const step = Math.min(left, 31_536_000);
        await own.client.sandbox.advanceClock(step);
        left -= step;
      }
      assert.equal((await own.client.cards.get(card.id, { onBehalfOf: m.external })).status, 'active');
      await own.client.sandbox.advanceClock(120);
      const expired = await own.client.cards.get(card.id, { onBehalfOf: m.external });
      assert.equal(expired.status, 'expired');
      assert.equal(await h2.available(m, 'USD'), usdBefore + 800n);
      assert.equal(await h2.onCard(m, card.id), 0n);
      assert.equal((await own.client.cards.get(closedCard.id, { onBehalfOf: m.external })).status, 'closed');
      assert.deepEqual((await h2.events(card.id)).map((e) => e.type).slice(-1), ['card.expired']);
      await own.client.sandbox.advanceClock(86_400);
      assert.equal(await h2.entries('card.balance_return', `${card.id}:expiry`), 1);
      await expectCode(own.client.cards.close(card.id, { onBehalfOf: m.external }), 'state_invalid', 400);
      await expectCode(
        own.client.cards.requestReplacement(card.id, { reason: 'expiring' }, { onBehalfOf: m.external }),
        'state_invalid',
        400,
      );
      await h2.ledgerOk();
    },
  );
});

describe('card lifecycle background work (production paths)', () => {
  let client: MerchantWalletClient;
  const h = ownMerchantLifecycle(
    () => service,
    (own) => ({ client } = own),
  );

  it(
    'the job defers until the request is due, then carries it out; the ticker reconciles closing cards on each ' +
      "scope's clock",
    async () => {
      const { m, card } = await h.fundedCard(600n);
      const { id } = await client.cards.requestReplacement(card.id, { reason: 'stolen' }, { onBehalfOf: m.external });
      const job = await service.ctx.db
        .selectFrom('jobs')
        .select(['id', 'kind', 'payload', 'attempts', 'max_attempts'])
        .where('dedupe_key', '=', `card.replacement_execute:${id}`)
        .executeTakeFirstOrThrow();
      const handler = cardLifecycleJobHandlers[job.kind]!;
      const claimed = { ...job, id: BigInt(job.id), payload: job.payload as Record<string, unknown> };
      await assert.rejects(
        handler(claimed, service.ctx),
        (err: unknown) => err instanceof RetryLater && err.delayMs > 50_000 && err.delayMs <= 60_000,
      );
      assert.equal((await client.cards.getReplacement(id)).status, 'requested');
      await setRow(service, 'card_replacements', id, { next_run_at: new Date(0) });
      await handler(claimed, service.ctx);
      assert.equal((await client.cards.getReplacement(id)).status, 'completed');
      await handler(claimed, service.ctx);
      assert.equal(await h.entries('card.balance_return', id), 1);

      const other = await h.card(m, 'virtual');
      await h.fundCard(m, other.id, 300n);
      const usdBefore = await h.available(m, 'USD');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'unknown' });
      assert.equal((await client.cards.close(other.id, { onBehalfOf: m.external })).status, 'closing');
      await client.sandbox.presetUpstreamBehavior({ upstream: 'card', behavior: 'success' });
      await setRow(service, 'cards', other.id, { close_next_check_at: new Date(0) });
      for (const ticker of cardLifecycleTickers) await ticker.run(service.ctx);
      assert.equal((await client.cards.get(other.id, { onBehalfOf: m.external })).status, 'closed');
      assert.equal(await h.available(m, 'USD'), usdBefore + 300n);
    },
  );
});
