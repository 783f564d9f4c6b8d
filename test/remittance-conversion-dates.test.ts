/** GET /v1/remit/conversion-dates through HTTP: forwarded from the provider's calendar, each error code. */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantWalletClient } from '@merchant-wallet/sdk';
import type { RunningService } from '../src/server.js';
import { addSandboxOffset } from '../src/platform/queries/clock.js';
import { newMerchantClient, useTestService } from './support/service.js';
import { expectCode } from './support/expect.js';
import { daysFrom } from './support/fixtures.js';

describe('remittance conversion dates', () => {
  let service: RunningService;
  let client: MerchantWalletClient;
  useTestService({ merchant: false }, (s) => ({ service } = s));
  before(async () => {
    const made = await newMerchantClient(service);
    client = made.client;
    // The merchant's sandbox clock on Tuesday 24 December 2030, 09:00 UTC: the provider's calendar follows it.
    const target = Date.parse('2030-12-24T09:00:00Z');
    await addSandboxOffset(service.ctx.db, made.merchantId, BigInt(target - Date.now()));
  });

  it('forwards the coming week: weekends and holidays invalid, earliest valid date', async () => {
    const eur = await client.remittance.conversionDates({ currency: 'EUR' });
    assert.equal(eur.settlement_currency, 'USD');
    assert.equal(eur.payout_currency, 'EUR');
    assert.equal(eur.same_currency, false);
    // Tuesday 24 to Monday 30 December: Christmas and Boxing Day, then the weekend, are not settlement days.
    assert.deepEqual(eur.dates, daysFrom('2030-12-24', [true, false, false, true, false, false, true]));
    assert.equal(eur.earliest_valid, '2030-12-24');
    const pobo = await client.remittance.conversionDates({ currency: 'GBP', line: 'pobo' });
    assert.equal(pobo.settlement_currency, 'EUR');
    assert.equal(pobo.dates[0]!.valid, true, 'before the pobo cut-off (10:00 UTC)');
    const same = await client.remittance.conversionDates({ currency: 'USD' });
    assert.equal(same.same_currency, true);
    assert.deepEqual(same.dates, []);
    assert.equal(same.earliest_valid, '2030-12-24');
    assert.deepEqual(
      await client.remittance.conversionDates({ currency: 'EUR', line: 'overnight' }),
      eur,
      'an unknown line is express',
    );
    // Whatever its length: the reference treats every unknown value as express, never as a malformed request.
    assert.deepEqual(
      await client.remittance.conversionDates({ currency: 'EUR', line: 'x'.repeat(33) }),
      eur,
      'a long unknown line is express too',
    );
    assert.deepEqual(await client.remittance.conversionDates({ currency: 'EUR', line: 'pobo'.repeat(100) }), eur);
  });

  it('answers each error code; the provider not answering is 502, never an empty list', async () => {
    await expectCode(client.request({ method: 'GET', path: '/v1/remit/conversion-dates' }), 'invalid_request', 400);
    const refused: Array<[{ currency: string; line?: string }, string]> = [
      [{ currency: 'eur' }, 'invalid_request'],
      [{ currency: 'EURO' }, 'invalid_request'],
      [{ currency: 'USD', line: 'pobo' }, 'product_not_available'],
      [{ currency: 'XYZ' }, 'product_not_available'],
      [{ currency: 'JPY' }, 'service_unavailable'],
    ];
    for (const [query, code] of refused) await expectCode(client.remittance.conversionDates(query), code, 400);
    const upstream = service.ctx.upstreams.remittance;
    const original = upstream.conversionDates;
    try {
      upstream.conversionDates = async () => {
        throw new Error('connection refused');
      };
      await expectCode(client.remittance.conversionDates({ currency: 'EUR' }), 'upstream_error', 502);
      upstream.conversionDates = async () => ({ kind: 'timeout' });
      await expectCode(client.remittance.conversionDates({ currency: 'EUR' }), 'upstream_error', 502);
    } finally {
      upstream.conversionDates = original;
    }
  });

  it('is for the merchant principal only', async () => {
    await client.members.create({ external_member_id: 'cd-member' });
    const res = await client.requestRaw({
      method: 'GET',
      path: '/v1/remit/conversion-dates',
      query: { currency: 'EUR' },
      onBehalfOf: 'cd-member',
    });
    assert.equal(res.status, 400);
  });
});
