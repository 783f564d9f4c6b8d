/** Pure rules of card controls (src/modules/cards/controls/rules.ts): limits, merchant rules, what stays of limits. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { limitProblems, merchantRuleProblems, tighterLimits } from '../src/modules/cards/controls/rules.js';

describe('card control rules', () => {
  const caps = { single: 1000000n, daily: 2000000n, monthly: 10000000n };
  it('limits: 0 is no limit, one unit minimum, product caps, single <= daily <= monthly among non-zero', () => {
    assert.deepEqual(limitProblems({ single: 0n, daily: 0n, monthly: 0n }, caps, 2), []);
    assert.deepEqual(limitProblems({ single: 100n, daily: 500n, monthly: 0n }, caps, 2), []);
    assert.deepEqual(limitProblems({ single: 99n, daily: 0n, monthly: 0n }, caps, 2), [
      { layer: 'single', reason: 'below_one_unit' },
    ]);
    assert.deepEqual(limitProblems({ single: 1000001n, daily: 0n, monthly: 0n }, caps, 2), [
      { layer: 'single', reason: 'above_product_cap' },
    ]);
    assert.deepEqual(limitProblems({ single: 500n, daily: 0n, monthly: 400n }, caps, 2), [
      { layer: 'monthly', reason: 'inconsistent' },
    ]);
  });
  it('merchant rules', () => {
    assert.deepEqual(merchantRuleProblems({ rule_type: 'white', mcc_list: ['5411'] }), []);
    assert.equal(
      merchantRuleProblems({ rule_type: 'white', merchant_names: [], mcc_list: [] })[0]!.key,
      'merchant_names',
    );
    assert.equal(merchantRuleProblems({ rule_type: 'grey', mcc_list: ['5411'] })[0]!.key, 'rule_type');
    assert.equal(merchantRuleProblems({ rule_type: 'black', mcc_list: ['541'] })[0]!.key, 'mcc_list[0]');
    assert.equal(merchantRuleProblems({ rule_type: 'black', mcc_list: Array(201).fill('5411') })[0]!.key, 'mcc_list');
    assert.equal(
      merchantRuleProblems({ rule_type: 'black', merchant_names: Array(201).fill('A') })[0]!.key,
      'merchant_names',
    );
  });
});

describe('tighterLimits (what stays when a push of limits fails)', () => {
  const L = (single: bigint, daily: bigint, monthly: bigint) => ({ single, daily, monthly });
  it('keeps each tightening and drops each loosening; 0 (no limit) is looser than any value', () => {
    assert.deepEqual(tighterLimits(L(100n, 1000n, 5000n), L(50n, 2000n, 0n)), L(50n, 1000n, 5000n));
    assert.deepEqual(tighterLimits(L(0n, 0n, 0n), L(10n, 0n, 30n)), L(10n, 0n, 30n));
    assert.deepEqual(tighterLimits(L(10n, 20n, 30n), L(0n, 0n, 0n)), L(10n, 20n, 30n));
  });
  it('a lower layer above a higher one is brought down to it (the result is consistent)', () => {
    assert.deepEqual(tighterLimits(L(5n, 5n, 0n), L(0n, 3n, 9n)), L(3n, 3n, 9n));
    assert.deepEqual(tighterLimits(L(7n, 0n, 0n), L(0n, 0n, 4n)), L(4n, 0n, 4n));
  });
  it('two consistent sets give a consistent set', () => {
    const sets = [L(0n, 0n, 0n), L(1n, 0n, 0n), L(5n, 5n, 0n), L(0n, 3n, 9n), L(2n, 8n, 8n), L(7n, 0n, 10n)];
    for (const a of sets)
      for (const b of sets) {
        assert.deepEqual(
          limitProblems(tighterLimits(a, b), L(100n, 100n, 100n), 0).filter((p) => p.reason === 'inconsistent'),
          [],
        );
      }
  });
});
