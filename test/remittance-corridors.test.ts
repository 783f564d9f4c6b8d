/** The corridor catalogue through the operator API: defaults of extensions 7 in both environments, create, change. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '../src/server.js';
import { admin, useTestService } from './support/service.js';
import { holderField, requiredField } from './support/fixtures.js';

describe('remittance corridors (operator API)', () => {
  let service: RunningService;
  useTestService({ merchant: false }, (s) => ({ service } = s));

  it(
    'starts with the default corridors in both environments, enabled, for both entity types, ' + 'KYC level 1',
    async () => {
      for (const environment of ['sandbox', 'production']) {
        const res = await admin(service, 'GET', `/admin/v1/remit/corridors?environment=${environment}&limit=100`);
        assert.equal(res.status, 200);
        const keys = res.body.data
          .map((c: any) => `${c.country}/${c.currency}/${c.payment_method}/${c.clearing_system}`)
          .sort();
        assert.deepEqual(keys, [
          'DE/EUR/LOCAL/SEPA',
          'ES/EUR/LOCAL/SEPA',
          'FR/EUR/LOCAL/SEPA',
          'GB/GBP/LOCAL/FPS',
          'IT/EUR/LOCAL/SEPA',
          'NL/EUR/LOCAL/SEPA',
          'US/USD/LOCAL/ACH',
          'US/USD/SWIFT/SWIFT',
        ]);
        for (const c of res.body.data) {
          assert.equal(c.enabled, true);
          assert.deepEqual(c.entity_types, ['INDIVIDUAL', 'COMPANY']);
          assert.equal(c.min_kyc_level, 1);
          assert.equal(c.environment, environment);
        }
      }
      const one = await admin(service, 'GET', '/admin/v1/remit/corridors/rco_gb_gbp_local_fps_sbx');
      assert.equal(one.status, 200);
      assert.equal(one.body.fee_fixed, '1.00');
      assert.equal(one.body.member_single_max, '10000.00');
      assert.deepEqual(one.body.confirmable_routing_types, ['sort_code']);
      assert.ok(
        one.body.contracts.INDIVIDUAL.some(
          (f: any) => f.key === 'bank_details.routing_code_value1' && f.type === 'routing_code',
        ),
      );
      assert.equal((await admin(service, 'GET', '/admin/v1/remit/corridors/rco_nope')).status, 404);
    },
  );

  it(
    'creates a corridor (clearing system case preserved), refuses duplicates and ill-formed contracts, and ' +
      'changes settings',
    async () => {
      const contract = [
        holderField,
        requiredField('bank_details.iban', 'IBAN', 'iban', 34, { account_identifier: 'iban' }),
      ];
      const body = {
        environment: 'sandbox',
        country: 'BE',
        currency: 'EUR',
        payment_method: 'LOCAL',
        clearing_system: 'SepaInst',
        contracts: { COMPANY: contract },
        fee_fixed: '0.50',
        payout_min: '5',
      };
      const created = await admin(service, 'POST', '/admin/v1/remit/corridors', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.clearing_system, 'SepaInst');
      assert.deepEqual(created.body.entity_types, ['COMPANY']);
      assert.equal(created.body.fee_fixed, '0.50');
      assert.equal(created.body.payout_min, '5.00');
      assert.equal(created.body.member_daily_max, null);
      assert.match(created.body.id, /^rco_/);
      assert.equal((await admin(service, 'POST', '/admin/v1/remit/corridors', body)).body.code, 'duplicate_resource');
      const lower = await admin(service, 'POST', '/admin/v1/remit/corridors', { ...body, clearing_system: 'sepainst' });
      assert.equal(lower.status, 201, 'another case is another clearing system');

      const bad = await admin(service, 'POST', '/admin/v1/remit/corridors', {
        ...body,
        clearing_system: 'X',
        contracts: { COMPANY: [{ key: 'a', label: 'a', type: 'text', required: true, max_length: 10 }] },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'invalid_fields');
      assert.deepEqual(bad.body.fields, [{ key: 'contracts.COMPANY.fields', reason: 'account_identifier_required' }]);

      const patched = await admin(service, 'PATCH', `/admin/v1/remit/corridors/${created.body.id}`, {
        enabled: false,
        member_daily_max: '100.00',
        restricted_jurisdictions: ['IR', 'IR'],
        min_kyc_level: 2,
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.enabled, false);
      assert.equal(patched.body.member_daily_max, '100.00');
      assert.deepEqual(patched.body.restricted_jurisdictions, ['IR']);
      assert.equal(patched.body.min_kyc_level, 2);
      const cleared = await admin(service, 'PATCH', `/admin/v1/remit/corridors/${created.body.id}`, {
        member_daily_max: null,
      });
      assert.equal(cleared.body.member_daily_max, null);
      const badAmount = await admin(service, 'PATCH', `/admin/v1/remit/corridors/${created.body.id}`, {
        payout_min: '0.001',
      });
      assert.deepEqual(badAmount.body.fields, [{ key: 'payout_min', reason: 'pattern' }]);
      assert.equal(
        (await admin(service, 'PATCH', '/admin/v1/remit/corridors/rco_nope', { enabled: true })).status,
        404,
      );
    },
  );
});
