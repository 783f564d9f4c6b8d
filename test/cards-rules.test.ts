/** Pure rules of card issuing: the state machines, the activation lock, limits, merchant rules, fees. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { activationVerdict, afterActivationFailure, openingStatus } from '../src/modules/cards/cards/state.js';
import { applicationTransition, supplementOpen } from '../src/modules/cards/applications/state.js';
import { feeInSource } from '../src/modules/cards/applications/rules.js';
import { limitProblems, merchantRuleProblems, tighterLimits } from '../src/modules/cards/controls/rules.js';
import { expiryText } from '../src/modules/cards/cards/rules.js';

const now = new Date('2026-01-01T00:00:00Z');
const physical = {
  status: 'unactivated' as const,
  formFactor: 'physical' as const,
  inventory: 'shipped' as const,
  lockedUntil: null,
};

describe('card state machine', () => {
  it('a supplement is open while pending and before its expiry, not at it', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const order = {
      status: 'need_docs',
      supplement_status: 'pending',
      supplement_expires_at: new Date(at.getTime() + 1),
    };
    assert.equal(supplementOpen(order, at), true);
    assert.equal(supplementOpen(order, new Date(at.getTime() + 1)), false);
    assert.equal(supplementOpen({ ...order, supplement_status: 'submitted' }, at), false);
    assert.equal(supplementOpen({ ...order, status: 'failed' }, at), false);
  });

  it('opens physical cards unactivated and virtual cards active', () => {
    assert.equal(openingStatus('physical'), 'unactivated');
    assert.equal(openingStatus('virtual'), 'active');
  });
  it('activation verdicts', () => {
    assert.deepEqual(activationVerdict(physical, now), { kind: 'move', to: 'active' });
    assert.equal(activationVerdict({ ...physical, status: 'active' }, now).kind, 'replay');
    assert.equal(activationVerdict({ ...physical, status: 'active', formFactor: 'virtual' }, now).kind, 'replay');
    assert.deepEqual(
      (activationVerdict({ ...physical, formFactor: 'virtual' }, now) as any).code,
      'product_not_available',
    );
    for (const inv of ['in_production', 'voided', null] as const)
      assert.equal((activationVerdict({ ...physical, inventory: inv }, now) as any).code, 'state_invalid');
    for (const inv of ['binding', 'bound'] as const)
      assert.equal(activationVerdict({ ...physical, inventory: inv }, now).kind, 'move');
    assert.equal((activationVerdict({ ...physical, status: 'closed' }, now) as any).code, 'state_invalid');
    assert.equal(
      (activationVerdict({ ...physical, lockedUntil: new Date(now.getTime() + 1) }, now) as any).code,
      'state_invalid',
    );
    assert.equal(activationVerdict({ ...physical, lockedUntil: now }, now).kind, 'move');
  });
  it('the third counted failure locks for 24 hours and resets the count', () => {
    assert.deepEqual(afterActivationFailure(0, now), { failures: 1, lockedUntil: null });
    assert.deepEqual(afterActivationFailure(1, now), { failures: 2, lockedUntil: null });
    assert.deepEqual(afterActivationFailure(2, now), { failures: 0, lockedUntil: new Date('2026-01-02T00:00:00Z') });
    // A failure answered after another attempt locked the card keeps the lock as it is.
    const lock = new Date(now.getTime() + 3_600_000);
    assert.deepEqual(afterActivationFailure(0, now, lock), { failures: 0, lockedUntil: lock });
    // A lock whose time is over counts as none.
    assert.deepEqual(afterActivationFailure(0, now, now), { failures: 1, lockedUntil: null });
  });
  it('application transitions', () => {
    assert.deepEqual(applicationTransition('pending', 'approved', false), { kind: 'move', to: 'approved' });
    assert.deepEqual(applicationTransition('pending', 'need_docs', false), { kind: 'move', to: 'need_docs' });
    assert.equal(applicationTransition('approved', 'approved', false).kind, 'replay');
    assert.equal(applicationTransition('rejected', 'approved', false).kind, 'refuse');
    assert.equal(applicationTransition('need_docs', 'approved', true).kind, 'refuse');
    assert.deepEqual(applicationTransition('need_docs', 'supplement_submitted', true), { kind: 'move', to: 'pending' });
    assert.deepEqual(applicationTransition('need_docs', 'supplement_expired', true), { kind: 'move', to: 'failed' });
    assert.equal(applicationTransition('pending', 'supplement_expired', false).kind, 'refuse');
  });
});

describe('card rules', () => {
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
  it('fee in the source asset and the printed expiry', () => {
    assert.equal(feeInSource(500n, 2, 6), 5000000n);
    assert.equal(feeInSource(501n, 2, 1), 51n);
    assert.equal(expiryText(3, 2029), '03/29');
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
