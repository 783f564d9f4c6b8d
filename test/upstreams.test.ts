import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { activeBehavior, setBehavior } from '../src/upstreams/queries/behaviors.js';
import { SimulatedCard } from '../src/upstreams/card/simulator.js';
import { SimulatedChain, simulatedAddress } from '../src/upstreams/chain/simulator.js';
import { upstreamAdaptersFrom } from '../src/upstreams/config.js';
import { createUpstreams } from '../src/upstreams/create-upstreams.js';
import { withDeadline } from '../src/upstreams/deadline.js';
import {
  SANDBOX_UNKNOWN_STATUS,
  type CallContext,
  type CallOutcome,
  type StatusOutcome,
  type UpstreamName,
} from '../src/upstreams/index.js';
import { SimulatedQrPay } from '../src/upstreams/qrpay/simulator.js';
import { SimulatedRemittance, nextBusinessDay } from '../src/upstreams/remittance/simulator.js';
import type { SimulatedProvider } from '../src/upstreams/simulated-provider.js';
import { loadConfig } from '../src/platform/config/config.js';
import { addSandboxOffset } from '../src/platform/queries/clock.js';
import { admin, createMerchant, newMerchantClient, useTestService, keyClient } from './support/service.js';
import { expectCode } from './support/expect.js';

/**
 * The four simulators behind their interfaces. Each case gives the money-moving call and the
 * status query of one upstream, so the same behaviour table runs over all of them.
 */
interface Case {
  upstream: UpstreamName;
  prefix: string;
  provider: SimulatedProvider;
  move(call: CallContext, requestId: string): Promise<CallOutcome<Record<string, string>>>;
  status(call: CallContext, requestId: string): Promise<StatusOutcome>;
}

/** The case of one simulator: its provider and status query come with it. */
function simulatorCase(
  upstream: UpstreamName,
  prefix: string,
  simulator: { provider: SimulatedProvider; status(call: CallContext, requestId: string): Promise<StatusOutcome> },
  move: Case['move'],
): Case {
  return { upstream, prefix, provider: simulator.provider, status: (c, id) => simulator.status(c, id), move };
}

// One service for the file: each test works on merchants and request ids of its own.
let service: RunningService;
useTestService({ merchant: false }, (s) => ({ service } = s));

describe('upstream simulators', () => {
  let cases: Case[];
  const delayMs = 3_600_000;

  before(async () => {
    const db = service.ctx.db;
    const sim = { confirmDelayMs: delayMs };
    const remittance = new SimulatedRemittance(db, sim, () => new Date());
    const card = new SimulatedCard(db, sim, () => new Date());
    const qrpay = new SimulatedQrPay(db, sim);
    const chain = new SimulatedChain(db, { ...sim, networks: ['TRON', 'ETHEREUM', 'BITCOIN'] });
    cases = [
      simulatorCase('remittance', 'RM', remittance, (c, id) =>
        remittance.submit(c, { requestId: id, payoutCurrency: 'SGD', payoutAmountMinor: 10_000n, payeeRef: 'RB1' }),
      ),
      simulatorCase('card', 'CD', card, (c, id) =>
        card.topUp(c, { requestId: id, cardRef: 'crd_1', currency: 'USD', amountMinor: 5_000n }),
      ),
      simulatorCase('qrpay', 'QP', qrpay, (c, id) =>
        qrpay.pay(c, {
          requestId: id,
          scheme: 'sg_paynow',
          merchantAccount: '2|201403121W|1',
          qrCode: '000201',
          currency: 'SGD',
          amountMinor: 1_250n,
        }),
      ),
      simulatorCase('chain', 'CH', chain, (c, id) =>
        chain.send(c, {
          requestId: id,
          asset: 'USDT',
          network: 'TRON',
          address: 'TJCnKsPa7y5okkXvQAidZBzqx3QyQ6sxMW',
          amountMinor: 1_000_000n,
        }),
      ),
    ];
  });

  const sandboxMerchant = async (): Promise<CallContext> => ({
    merchantId: await createMerchant(service),
    environment: 'sandbox',
  });
  const settle = (c: Case, requestId: string) =>
    service.ctx.db
      .updateTable('upstream_sim_orders')
      .set({ settle_at: new Date(Date.now() - 1000) })
      .where('upstream', '=', c.upstream)
      .where('request_id', '=', requestId)
      .execute();

  it('accept with their own order ids, confirm asynchronously, and are idempotent by our request id', async () => {
    const call = await sandboxMerchant();
    for (const c of cases) {
      const id = `req_${randomUUID()}`;
      const first = await c.move(call, id);
      assert.equal(first.kind, 'accepted', c.upstream);
      if (first.kind !== 'accepted') continue;
      assert.match(first.providerOrderId, new RegExp(`^${c.prefix}[0-9A-F]{16}$`), c.upstream);
      assert.equal(first.status, 'processing');
      assert.deepEqual(await c.status(call, id), {
        kind: 'found',
        providerOrderId: first.providerOrderId,
        status: 'processing',
      });
      const again = await c.move(call, id);
      assert.deepEqual(again, first, `${c.upstream}: same request id, same answer`);
      await settle(c, id);
      assert.deepEqual(
        await c.status(call, id),
        { kind: 'found', providerOrderId: first.providerOrderId, status: 'succeeded' },
        c.upstream,
      );
      const rows = await service.ctx.db
        .selectFrom('upstream_sim_orders')
        .select('provider_order_id')
        .where('request_id', '=', id)
        .execute();
      assert.equal(rows.length, 1);
      assert.deepEqual(await c.status(call, `req_${randomUUID()}`), { kind: 'not_found' });
    }
  });

  it('answer each injected behaviour and record the true outcome for reconciliation', async () => {
    for (const c of cases) {
      const call = await sandboxMerchant();
      const run = async (behavior: 'reject' | 'timeout' | 'unknown' | 'unknown_status') => {
        await setBehavior(service.ctx.db, call.merchantId, c.upstream, behavior);
        const id = `req_${randomUUID()}`;
        return { id, answer: await c.move(call, id) };
      };
      const rejected = await run('reject');
      assert.equal(rejected.answer.kind, 'rejected', c.upstream);
      assert.equal(
        ((await c.status(call, rejected.id)) as any).status,
        'failed',
        `${c.upstream}: a refused order is failed`,
      );

      const timedOut = await run('timeout');
      assert.deepEqual(timedOut.answer, { kind: 'timeout' });
      await settle(c, timedOut.id);
      assert.equal(
        ((await c.status(call, timedOut.id)) as any).status,
        'succeeded',
        `${c.upstream}: timeout means the provider did process it`,
      );

      const unknown = await run('unknown');
      assert.equal(unknown.answer.kind, 'unknown');
      assert.deepEqual(
        await c.status(call, unknown.id),
        { kind: 'not_found' },
        `${c.upstream}: unknown means the provider never got it`,
      );

      const odd = await run('unknown_status');
      assert.equal(odd.answer.kind, 'accepted');
      assert.equal((odd.answer as any).status, SANDBOX_UNKNOWN_STATUS);
      await settle(c, odd.id);
      assert.equal(
        ((await c.status(call, odd.id)) as any).status,
        SANDBOX_UNKNOWN_STATUS,
        `${c.upstream}: the sentinel sticks to the order`,
      );

      // Back to success: a repeat of the timed-out request id answers what the provider has.
      await setBehavior(service.ctx.db, call.merchantId, c.upstream, 'success');
      const replay = await c.move(call, timedOut.id);
      assert.equal(replay.kind, 'accepted');
      assert.equal((replay as any).status, 'succeeded');
      // And the never-received one is received now.
      assert.equal((await c.move(call, unknown.id)).kind, 'accepted');
    }
  });

  it('scope injection to one merchant and one upstream; production and expired presets answer success', async () => {
    const a = await sandboxMerchant();
    const b = await sandboxMerchant();
    await setBehavior(service.ctx.db, a.merchantId, 'card', 'reject');
    const [card, chain] = [cases.find((c) => c.upstream === 'card')!, cases.find((c) => c.upstream === 'chain')!];
    assert.equal((await card.move(a, `req_${randomUUID()}`)).kind, 'rejected');
    assert.equal((await card.move(b, `req_${randomUUID()}`)).kind, 'accepted', 'another merchant');
    assert.equal((await chain.move(a, `req_${randomUUID()}`)).kind, 'accepted', 'another upstream');
    assert.equal(await activeBehavior(service.ctx.db, { ...a, environment: 'production' }, 'card'), 'success');
    assert.equal(
      (await card.move({ ...a, environment: 'production' }, `req_${randomUUID()}`)).kind,
      'accepted',
      'production ignores presets',
    );
    // An hour and a second pass on a's sandbox clock.
    await addSandboxOffset(service.ctx.db, a.merchantId, 3_601_000n);
    assert.equal(await activeBehavior(service.ctx.db, a, 'card'), 'success');
    assert.equal((await card.move(a, `req_${randomUUID()}`)).kind, 'accepted');
  });

  it('leave read-only calls alone: conversion dates, name checks and QR checks ignore presets', async () => {
    const call = await sandboxMerchant();
    const remittance = new SimulatedRemittance(
      service.ctx.db,
      { confirmDelayMs: 0 },
      () => new Date('2025-01-03T10:00:00Z'),
    );
    const qrpay = new SimulatedQrPay(service.ctx.db, { confirmDelayMs: 0 });
    for (const behavior of ['reject', 'timeout', 'unknown', 'unknown_status'] as const) {
      await setBehavior(service.ctx.db, call.merchantId, 'remittance', behavior);
      await setBehavior(service.ctx.db, call.merchantId, 'qrpay', behavior);
      const dates = await remittance.conversionDates(call, { currency: 'SGD', line: 'express' });
      assert.equal(dates.kind, 'dates');
      assert.equal((dates as any).earliestValid, '2025-01-03');
      assert.equal(
        (
          await remittance.checkName(call, {
            country: 'DE',
            currency: 'EUR',
            paymentMethod: 'LOCAL',
            clearingSystem: 'SEPA',
            entityType: 'INDIVIDUAL',
            holderName: 'Max Mustermann',
            fields: { 'bank_details.iban': 'DE89370400440532013000' },
          })
        ).kind,
        'match',
      );
      assert.deepEqual(await qrpay.check(call, { scheme: 'sg_paynow', merchantAccount: '2|X|1' }), { kind: 'ok' });
    }
    assert.equal((await remittance.conversionDates(call, { currency: 'JPY', line: 'pobo' })).kind, 'line_closed');
    assert.equal(nextBusinessDay(new Date('2025-01-06T00:00:00Z')), '2025-01-07');
  });

  it('refuse on their own merits: corridor, card, QR merchant, chain channel', async () => {
    const call = await sandboxMerchant();
    const db = service.ctx.db;
    const sim = { confirmDelayMs: 0 };
    const id = () => `req_${randomUUID()}`;
    assert.equal(
      (
        await new SimulatedRemittance(db, sim, () => new Date()).submit(call, {
          requestId: id(),
          payoutCurrency: 'JPY',
          payoutAmountMinor: 1n,
          payeeRef: 'p',
        })
      ).kind,
      'rejected',
    );
    assert.equal(
      (
        await new SimulatedCard(db, sim, () => new Date()).topUp(call, {
          requestId: id(),
          cardRef: 'SIM-REFUSE-1',
          currency: 'USD',
          amountMinor: 1n,
        })
      ).kind,
      'rejected',
    );
    const qr = new SimulatedQrPay(db, sim);
    assert.equal((await qr.check(call, { scheme: 'sg_paynow', merchantAccount: '2|SIM-REFUSE-7|1' })).kind, 'refused');
    assert.equal(
      (
        await qr.pay(call, {
          requestId: id(),
          scheme: 'sg_paynow',
          merchantAccount: '2|SIM-REFUSE-7|1',
          qrCode: '',
          currency: 'SGD',
          amountMinor: 1n,
        })
      ).kind,
      'rejected',
    );
    const chain = new SimulatedChain(db, { ...sim, networks: ['TRON'] });
    assert.equal(
      (await chain.createDepositAddress(call, { requestId: id(), asset: 'USDT', network: 'ETHEREUM' })).kind,
      'rejected',
    );
    // Synchronous: answered succeeded at once whatever the confirmation delay.
    const slow = new SimulatedChain(db, { confirmDelayMs: delayMs, networks: ['TRON'] });
    const rid = id();
    const addr = await slow.createDepositAddress(call, { requestId: rid, asset: 'USDT', network: 'TRON' });
    assert.equal(addr.kind, 'accepted');
    assert.equal((addr as any).status, 'succeeded');
    assert.deepEqual(await slow.createDepositAddress(call, { requestId: rid, asset: 'USDT', network: 'TRON' }), addr);
  });

  it('refund a succeeded QR payment once, and only a succeeded one', async () => {
    const call = await sandboxMerchant();
    const qr = new SimulatedQrPay(service.ctx.db, { confirmDelayMs: 0 });
    const rid = `req_${randomUUID()}`;
    assert.equal((await qr.refund(call, { paymentRequestId: rid, amountMinor: 1n })).kind, 'rejected');
    await qr.pay(call, {
      requestId: rid,
      scheme: 'sg_paynow',
      merchantAccount: '2|X|1',
      qrCode: '',
      currency: 'SGD',
      amountMinor: 100n,
    });
    assert.equal((await qr.refund(call, { paymentRequestId: rid, amountMinor: 100n })).kind, 'accepted');
    assert.equal((await qr.refund(call, { paymentRequestId: rid, amountMinor: 100n })).kind, 'accepted', 'idempotent');
    assert.equal(((await qr.status(call, rid)) as any).status, 'refunded');
  });

  it('derive well-formed addresses that match the catalogue patterns', async () => {
    // The networks the simulated chain provider has a channel on (other suites may add more to a shared database).
    const networks = await service.ctx.db
      .selectFrom('asset_networks')
      .select(['network', 'address_pattern'])
      .where('network', 'in', ['TRON', 'ETHEREUM', 'BITCOIN'])
      .execute();
    assert.ok(networks.length >= 3);
    for (const n of networks) {
      for (let i = 0; i < 20; i++) {
        const address = simulatedAddress(n.network, `seed-${i}`);
        assert.match(address, new RegExp(n.address_pattern), `${n.network} ${address}`);
        assert.equal(simulatedAddress(n.network, `seed-${i}`), address);
      }
    }
  });

  it('are called under a deadline: no answer in time is a timeout, a throw is unknown', async () => {
    assert.deepEqual(await withDeadline(20, () => new Promise(() => {})), { kind: 'timeout' });
    assert.deepEqual(
      await withDeadline(1_000, async () => {
        throw new Error('boom');
      }),
      { kind: 'unknown', reason: 'boom' },
    );
    assert.deepEqual(await withDeadline(1_000, async () => ({ kind: 'not_found' })), { kind: 'not_found' });
  });

  it('are chosen by configuration', () => {
    assert.deepEqual(upstreamAdaptersFrom({}), {
      remittance: 'simulator',
      card: 'simulator',
      qrpay: 'simulator',
      chain: 'simulator',
    });
    assert.equal(upstreamAdaptersFrom({ UPSTREAM_ADAPTERS: 'QRPAY=Simulator, chain=simulator' }).qrpay, 'simulator');
    assert.throws(() => upstreamAdaptersFrom({ UPSTREAM_ADAPTERS: 'qrpay=acme' }), /unknown adapter/);
    assert.throws(() => upstreamAdaptersFrom({ UPSTREAM_ADAPTERS: 'bank=simulator' }), /unknown upstream/);
    assert.throws(() => upstreamAdaptersFrom({ UPSTREAM_CARD_ADAPTER: 'acme' }), /unknown adapter/);
    assert.throws(() => upstreamAdaptersFrom({ UPSTREAM_ADAPTERS: 'qrpay' }), /name=adapter/);
    const config = loadConfig({ SIMULATOR_CONFIRM_DELAY_MS: '0', SIMULATOR_CHAIN_NETWORKS: 'tron' });
    assert.equal(config.simulatorConfirmDelayMs, 0);
    assert.deepEqual(config.simulatorChainNetworks, ['TRON']);
    assert.equal(config.upstreamNotFoundGraceMs, 60_000);
    const ups = createUpstreams(service.ctx.db, config);
    assert.deepEqual(Object.keys(ups).sort(), ['card', 'chain', 'kyc', 'notifier', 'qrpay', 'rates', 'remittance']);
    assert.throws(
      () =>
        createUpstreams(service.ctx.db, { ...config, upstreamAdapters: { ...config.upstreamAdapters, qrpay: 'acme' } }),
      /unknown adapter/,
    );
  });
});

describe('POST /v1/merchant/deposit-address', () => {
  const ask = (client: MerchantWalletClient, body: Record<string, unknown>, idempotencyKey: string = randomUUID()) =>
    client.requestRaw({ method: 'POST', path: '/v1/merchant/deposit-address', body, idempotencyKey });
  const inject = (client: MerchantWalletClient, upstream: string, behavior: string) =>
    client.request({ method: 'POST', path: '/v1/sandbox/upstream-behavior', body: { upstream, behavior } });

  it('issues an address from the chain upstream, stores it, replays it, and withdrawals refuse it', async () => {
    const { client } = await newMerchantClient(service);
    const key = randomUUID();
    const res = await ask(client, { asset: 'usdt', network: 'tron' }, key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.id, /^dad_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(res.body.asset, 'USDT');
    assert.equal(res.body.network, 'TRON');
    assert.match(res.body.address, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
    assert.deepEqual(Object.keys(res.body).sort(), ['address', 'asset', 'created_at', 'id', 'network']);
    const replay = await ask(client, { asset: 'usdt', network: 'tron' }, key);
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.deepEqual(replay.body, res.body);
    const eth = await ask(client, { asset: 'ETH', network: 'ETHEREUM' });
    assert.match(eth.body.address, /^0x[0-9a-f]{40}$/);
    const btc = await ask(client, { asset: 'BTC', network: 'BITCOIN' });
    assert.match(btc.body.address, /^bc1q/);

    const list = (await client.request({ method: 'GET', path: '/v1/merchant/deposit-addresses' })) as any;
    assert.deepEqual(
      list.data.map((a: any) => a.id),
      [btc.body.id, eth.body.id, res.body.id],
    );
    const tronOnly = (await client.request({
      method: 'GET',
      path: '/v1/merchant/deposit-addresses',
      query: { network: 'tron' },
    })) as any;
    assert.deepEqual(
      tronOnly.data.map((a: any) => a.id),
      [res.body.id],
    );

    // The SDK's helpers: the same key yields the same address; the list pages with filters.
    const viaSdk = await client.merchant.requestDepositAddress(
      { asset: 'usdt', network: 'tron' },
      { idempotencyKey: key },
    );
    assert.deepEqual(viaSdk, res.body);
    const listed = [];
    for await (const a of client.merchant.depositAddresses({ network: 'TRON', limit: 1 })) listed.push(a.id);
    assert.deepEqual(listed, [res.body.id]);

    const member = (await client.members.create({ external_member_id: `w-${randomUUID().slice(0, 6)}` })) as any;
    await client.deposits.create({ member_id: member.id, asset: 'USDT', amount: '50', tx_hash: `0x${randomUUID()}` });
    await expectCode(
      client.withdrawals.create(
        { asset: 'USDT', network: 'TRON', address: res.body.address, amount: '10' },
        { onBehalfOf: member.id },
      ),
      'address_not_allowed',
    );
  });

  it('answers asset_not_allowed for an unknown asset or network', async () => {
    const { client } = await newMerchantClient(service);
    for (const body of [
      { asset: 'DOGE', network: 'TRON' },
      { asset: 'USDT', network: 'BITCOIN' },
      { asset: 'SGD', network: 'TRON' },
      { asset: 'USDT', network: 'SOLANA' },
    ]) {
      const res = await ask(client, body);
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'asset_not_allowed', JSON.stringify(body));
    }
    assert.equal((await ask(client, { asset: 'USDT' })).body.code, 'invalid_request');
  });

  it(
    'answers service_unavailable with retry_after when the chain upstream cannot serve; ' + 'the same key works later',
    async () => {
      const { client } = await newMerchantClient(service);
      for (const behavior of ['reject', 'timeout', 'unknown']) {
        await inject(client, 'chain', behavior);
        const res = await ask(client, { asset: 'USDT', network: 'TRON' });
        assert.equal(res.status, 400, behavior);
        assert.equal(res.body.code, 'service_unavailable');
        assert.equal(res.body.type, 'invalid_request_error');
        assert.equal(res.body.retry_after, 60);
      }
      const key = randomUUID();
      assert.equal((await ask(client, { asset: 'USDT', network: 'TRON' }, key)).body.code, 'service_unavailable');
      await inject(client, 'chain', 'success');
      const later = await ask(client, { asset: 'USDT', network: 'TRON' }, key);
      assert.equal(later.status, 201, "no answer (unknown) is not stored as the key's result");
      assert.equal(later.headers['x-idempotent-replay'], undefined);
      // A refusal is the key's result (the provider would repeat it to the same request id): a new key then works.
      const refusedKey = randomUUID();
      await inject(client, 'chain', 'reject');
      assert.equal(
        (await ask(client, { asset: 'USDT', network: 'TRON' }, refusedKey)).body.code,
        'service_unavailable',
      );
      await inject(client, 'chain', 'success');
      const replayed = await ask(client, { asset: 'USDT', network: 'TRON' }, refusedKey);
      assert.deepEqual([replayed.body.code, replayed.headers['x-idempotent-replay']], ['service_unavailable', 'true']);
      assert.equal((await ask(client, { asset: 'USDT', network: 'TRON' })).status, 201, 'a new key gets an address');

      // A network of the catalogue the chain provider has no channel on.
      const put = await admin(service, 'PUT', '/admin/v1/assets/USDT/networks/SOLANA', {
        enabled: true,
        withdrawal_fee: '1',
        withdrawal_min: '1',
        address_pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$',
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const solana = await ask(client, { asset: 'USDT', network: 'SOLANA' });
      assert.equal(solana.body.code, 'service_unavailable');
      assert.equal(solana.body.retry_after, 60);
      await admin(service, 'PUT', '/admin/v1/assets/USDT/networks/SOLANA', {
        enabled: false,
        withdrawal_fee: '1',
        withdrawal_min: '1',
        address_pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$',
      });
    },
  );

  it(
    'unknown_status: an address answered with a status outside our enumeration is not issued: ' +
      'service_unavailable, nothing stored, one operator alert',
    async () => {
      const { client, merchantId } = await newMerchantClient(service);
      const key = randomUUID();
      await inject(client, 'chain', 'unknown_status');
      try {
        for (let i = 0; i < 2; i++) {
          const res = await ask(client, { asset: 'USDT', network: 'TRON' }, key);
          assert.equal(res.status, 400, JSON.stringify(res.body));
          assert.equal(res.body.code, 'service_unavailable');
          assert.equal(res.body.retry_after, 60);
          assert.equal(res.headers['x-idempotent-replay'], undefined, "not stored as the key's result");
        }
      } finally {
        await inject(client, 'chain', 'success');
      }
      assert.deepEqual(
        ((await client.request({ method: 'GET', path: '/v1/merchant/deposit-addresses' })) as any).data,
        [],
      );
      const alerts = (
        await admin(service, 'GET', '/admin/v1/alerts?kind=upstream.unknown_status&limit=100')
      ).body.data.filter(
        (a: { object: string; merchant_id: string }) => a.object === 'deposit_address' && a.merchant_id === merchantId,
      );
      assert.equal(alerts.length, 1, 'one alert for the request, however often it is retried');
      // The provider keeps answering that request id so; a new key gets an address.
      assert.equal((await ask(client, { asset: 'USDT', network: 'TRON' }, key)).body.code, 'service_unavailable');
      assert.equal((await ask(client, { asset: 'USDT', network: 'TRON' })).status, 201);
    },
  );

  it('is a merchant-principal call needing merchant:write; listing needs merchant:read', async () => {
    const merchantId = await createMerchant(service);
    const reader = await keyClient(service, merchantId, { scopes: ['merchant:read'] });
    assert.equal((await ask(reader, { asset: 'USDT', network: 'TRON' })).body.code, 'insufficient_scope');
    assert.deepEqual(
      ((await reader.request({ method: 'GET', path: '/v1/merchant/deposit-addresses' })) as any).data,
      [],
    );
    const { client } = await newMerchantClient(service);
    const member = await client.members.create({ external_member_id: 'someone' });
    assert.ok(member);
    const res = await client.requestRaw({
      method: 'POST',
      path: '/v1/merchant/deposit-address',
      body: { asset: 'USDT', network: 'TRON' },
      onBehalfOf: 'someone',
    });
    assert.equal(res.body.code, 'invalid_request');
    assert.equal(
      (
        await client.requestRaw({
          method: 'POST',
          path: '/v1/merchant/deposit-address',
          body: { asset: 'USDT', network: 'TRON' },
          idempotencyKey: false,
        })
      ).body.code,
      'idempotency_key_required',
    );
  });
});
