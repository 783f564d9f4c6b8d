/**
 * Remittance corridors' pure rules (src/modules/remittance/corridors/rules.ts), without a server:
 * the routing types a contract carries, a corridor's refusal before any field is read, and a
 * payee's refusal once its values are (restricted jurisdictions, unconfirmable routing types).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldSpec } from '../src/modules/remittance/corridors/contracts.js';
import { contractRoutingTypes, corridorRefusal, payeeRefusal } from '../src/modules/remittance/corridors/rules.js';
import { contractOf } from './support/fixtures.js';

const sepa = contractOf('DE', 'SEPA');
const fps = contractOf('GB', 'FPS');
const swift = contractOf('US', 'SWIFT');

describe('routing types of a contract', () => {
  it("are its type fields' values, and bic for a BIC field; none for a contract without either", () => {
    assert.deepEqual(contractRoutingTypes(fps), ['sort_code']);
    assert.deepEqual(contractRoutingTypes(swift).sort(), ['aba', 'bic']);
    assert.deepEqual(contractRoutingTypes(sepa), ['bic']);
    assert.deepEqual(contractRoutingTypes([]), []);
    const text: FieldSpec = { key: 'first_name', type: 'text', required: true, max_length: 64 } as FieldSpec;
    assert.deepEqual(contractRoutingTypes([text]), []);
  });
  it('a routing code whose type field is missing from the contract names no type', () => {
    const orphan = { key: 'bank_details.routing_code_value1', type: 'routing_code', type_field: 'nowhere' };
    assert.deepEqual(contractRoutingTypes([orphan as unknown as FieldSpec]), []);
  });
});

describe('a corridor without routing types', () => {
  it('is never refused for them: an empty contract is served when enabled', () => {
    const policy = { enabled: true, restrictedJurisdictions: [], confirmableRoutingTypes: [] };
    assert.equal(corridorRefusal(policy, []), undefined);
    assert.equal(corridorRefusal({ ...policy, enabled: false }, []), 'not_enabled', 'disabled comes first');
    assert.equal(payeeRefusal(policy, [], {}, 'DE'), undefined);
  });
});

describe('corridor policy', () => {
  const policy = { enabled: true, restrictedJurisdictions: ['IR', 'KP'], confirmableRoutingTypes: ['sort_code'] };
  it(
    'refuses a disabled corridor, an entity type it does not serve, and a corridor that confirms none of its ' +
      'routing types',
    () => {
      assert.equal(corridorRefusal({ ...policy, enabled: false }, fps), 'not_enabled');
      assert.equal(corridorRefusal(policy, undefined), 'entity_type_not_served');
      assert.equal(corridorRefusal({ ...policy, confirmableRoutingTypes: [] }, fps), 'no_confirmable_routing_type');
      assert.equal(corridorRefusal(policy, fps), undefined);
    },
  );
  it(
    'refuses restricted jurisdictions (address, BIC country, ' + 'corridor country) and an unconfirmable routing type',
    () => {
      const values = {
        'address.country': 'GB',
        'bank_details.routing_code_type1': 'sort_code',
        'bank_details.routing_code_value1': '040004',
      };
      assert.equal(payeeRefusal(policy, fps, values, 'GB'), undefined);
      assert.equal(payeeRefusal(policy, fps, { ...values, 'address.country': 'IR' }, 'GB'), 'restricted_jurisdiction');
      assert.equal(payeeRefusal(policy, fps, values, 'KP'), 'restricted_jurisdiction');
      assert.equal(
        payeeRefusal({ ...policy, confirmableRoutingTypes: ['aba'] }, fps, values, 'GB'),
        'no_confirmable_routing_type',
      );
      const swiftPolicy = { ...policy, confirmableRoutingTypes: ['bic'] };
      assert.equal(
        payeeRefusal(swiftPolicy, swift, { 'bank_details.swift_code': 'BKIDIRTH' }, 'US'),
        'restricted_jurisdiction',
      );
      assert.equal(
        payeeRefusal(
          swiftPolicy,
          swift,
          {
            'bank_details.swift_code': 'CHASUS33',
            'bank_details.routing_code_type1': 'aba',
            'bank_details.routing_code_value1': '021000021',
          },
          'US',
        ),
        'no_confirmable_routing_type',
      );
    },
  );
});
