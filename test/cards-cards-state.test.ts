/** The card record's state machine (src/modules/cards/cards/state.ts): opening, activation, the activation lock. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  activationResumeDecision,
  activationVerdict,
  afterActivationFailure,
  cardCanSpend,
  openingStatus,
} from '../src/modules/cards/cards/state.js';
import type { CardStatus } from '../src/modules/cards/cards/tables.js';

const now = new Date('2026-01-01T00:00:00Z');
const physical = {
  status: 'unactivated' as const,
  formFactor: 'physical' as const,
  inventory: 'shipped' as const,
  lockedUntil: null,
};

describe('card state machine', () => {
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
});

describe('which card spends', () => {
  const statuses: CardStatus[] = ['unactivated', 'active', 'closing', 'closed', 'expired', 'replaced'];
  it('only an active card that is not frozen spends', () => {
    for (const status of statuses) assert.equal(cardCanSpend({ status, frozenAt: null }), status === 'active');
    assert.equal(cardCanSpend({ status: 'active', frozenAt: new Date() }), false);
  });
});

describe('activation retry', () => {
  it('an activation retry: active at the issuer is done, inactive is asked again, no answer stays unknown', () => {
    assert.deepEqual(activationResumeDecision({ kind: 'found', active: true }), { kind: 'activated' });
    assert.deepEqual(activationResumeDecision({ kind: 'found', active: false }), { kind: 'ask' });
    assert.deepEqual(activationResumeDecision({ kind: 'not_found' }), { kind: 'ask' });
    assert.deepEqual(activationResumeDecision({ kind: 'timeout' }), { kind: 'unknown', timeout: true });
    assert.deepEqual(activationResumeDecision({ kind: 'unknown', reason: '5xx' }), { kind: 'unknown', timeout: false });
  });
});
