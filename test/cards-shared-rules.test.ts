/** Pure rules several card sub-areas share (src/modules/cards/shared/rules.ts): the address checks. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressProblems,
  normaliseAddress,
  cardReferenceTypeOfCard,
  replacementReferenceType,
} from '../src/modules/cards/shared/rules.js';

const good = { address: '1 Main St', city: 'Springfield', country: 'US', postal_code: '12345' };

describe('cards shared rules', () => {
  describe('addressProblems', () => {
    it('a complete address has none; a state is optional', () => {
      assert.deepEqual(addressProblems(good), []);
      assert.deepEqual(addressProblems({ ...good, state: 'IL' }), []);
    });

    it('no address at all: one `required` under the prefix (or `address`)', () => {
      assert.deepEqual(addressProblems(undefined), [{ key: 'address', reason: 'required' }]);
      assert.deepEqual(addressProblems(undefined, 'shipping_address.'), [
        { key: 'shipping_address', reason: 'required' },
      ]);
    });

    it('each missing or blank field is named, with the prefix', () => {
      assert.deepEqual(addressProblems({ country: 'US' }, 'billing_address.'), [
        { key: 'billing_address.address', reason: 'required' },
        { key: 'billing_address.city', reason: 'required' },
        { key: 'billing_address.postal_code', reason: 'required' },
      ]);
      assert.deepEqual(addressProblems({ ...good, city: '   ' }), [{ key: 'city', reason: 'required' }]);
      assert.deepEqual(addressProblems({ ...good, postal_code: 12345 }), [{ key: 'postal_code', reason: 'required' }]);
    });

    it('the country is ISO 3166-1 alpha-2 in upper case', () => {
      assert.deepEqual(addressProblems({ ...good, country: '' }), [{ key: 'country', reason: 'required' }]);
      for (const country of ['us', 'USA', 'U1', 'D'])
        assert.deepEqual(addressProblems({ ...good, country }), [
          { key: 'country', reason: 'must be ISO 3166-1 alpha-2, upper case' },
        ]);
    });

    it('a state given blank or not a string is refused (omit it instead)', () => {
      for (const state of ['', '  ', 7])
        assert.deepEqual(addressProblems({ ...good, state }), [
          { key: 'state', reason: 'omit where the country has none' },
        ]);
    });
  });

  describe('normaliseAddress', () => {
    it('trims every text field, keeps the country as given', () => {
      assert.deepEqual(
        normaliseAddress({ address: ' 1 Main St ', city: ' Springfield', country: 'US', postal_code: '12345 ' }),
        good,
      );
    });

    it('keeps a state (trimmed) only when one was given', () => {
      assert.deepEqual(normaliseAddress({ ...good, state: ' IL ' }), { ...good, state: 'IL' });
      assert.equal('state' in normaliseAddress(good), false);
    });
  });

  it('the references a card that stops posts under', () => {
    assert.equal(replacementReferenceType, 'card_replacement');
    assert.equal(cardReferenceTypeOfCard, 'card');
  });
});
