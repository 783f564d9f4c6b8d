/** Pure rules of card applications (src/modules/cards/applications/rules.ts): the opening fee in the source asset. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { feeInSource } from '../src/modules/cards/applications/rules.js';

describe('card application rules', () => {
  it('fee in the source asset', () => {
    assert.equal(feeInSource(500n, 2, 6), 5000000n);
    assert.equal(feeInSource(501n, 2, 1), 51n);
  });
  it('same places: unchanged; fewer places: rounded up, never down; zero stays zero', () => {
    assert.equal(feeInSource(12345n, 2, 2), 12345n);
    assert.equal(feeInSource(500n, 2, 1), 50n);
    assert.equal(feeInSource(1n, 2, 0), 1n);
    assert.equal(feeInSource(100n, 2, 0), 1n);
    assert.equal(feeInSource(101n, 2, 0), 2n);
    assert.equal(feeInSource(0n, 2, 0), 0n);
    assert.equal(feeInSource(0n, 2, 6), 0n);
  });
});
